//! The edge model: a static embedding table distilled from all-MiniLM-L6-v2
//! (`scripts/distill-static.py`), for hosts that cannot afford the transformer — a
//! Cloudflare Worker has 128 MB of memory; the transformer needs about 250 MB in wasm.
//!
//! A text's vector is the mean of its word pieces' rows, L2-normalized: no attention, so it
//! costs microseconds and a few MB, but it ignores word order and context. Its vectors live
//! in their own space (model id [`STATIC_MINILM_ID`]) and are never compared with the
//! transformer's.

use tokenizers::Tokenizer;

use crate::{l2_normalize, EmbedError, ModelInfo};

/// The id engram stores with vectors of the distilled static model.
pub const STATIC_MINILM_ID: &str = "static-minilm-256-int8";

const MAGIC: &[u8; 4] = b"EGST";
const VERSION: u32 = 1;
const HEADER: usize = 16;

/// A loaded static embedding table with its tokenizer.
pub struct StaticEmbedder {
    tokenizer: Tokenizer,
    /// One scale per vocabulary row.
    scales: Vec<f32>,
    /// `vocab × dims` int8 rows, kept quantized (7.8 MB instead of 31 MB).
    rows: Vec<i8>,
    /// Row used for a text without word pieces (the empty text): the `[CLS]` row.
    empty_row: usize,
    info: ModelInfo,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("info", &self.info)
            .field("vocab", &self.scales.len())
            .finish()
    }
}

impl StaticEmbedder {
    /// Loads a table written by `scripts/distill-static.py` (`EGST` v1: vocab, dims, row
    /// scales, int8 rows) and the tokenizer it was distilled with. Every size is checked
    /// against the bytes actually present.
    pub fn load(table: &[u8], tokenizer_json: &[u8], model_id: &str) -> Result<Self, EmbedError> {
        let bad = |why: String| EmbedError::Model(format!("not a static embedding table: {why}"));
        if table.len() < HEADER || &table[..4] != MAGIC {
            return Err(bad("missing the EGST header".into()));
        }
        let word =
            |i: usize| u32::from_le_bytes([table[i], table[i + 1], table[i + 2], table[i + 3]]);
        let (version, vocab, dims) = (word(4), word(8) as usize, word(12) as usize);
        if version != VERSION {
            return Err(bad(format!("version {version}, expected {VERSION}")));
        }
        let expected = vocab
            .checked_mul(dims)
            .and_then(|n| n.checked_add(vocab.checked_mul(4)?))
            .and_then(|n| n.checked_add(HEADER));
        if dims == 0 || vocab == 0 || expected != Some(table.len()) {
            return Err(bad(format!(
                "{} bytes do not hold {vocab} rows of {dims} dims",
                table.len()
            )));
        }
        let scales: Vec<f32> = table[HEADER..HEADER + 4 * vocab]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if scales.iter().any(|s| !s.is_finite()) {
            return Err(bad("a row scale is not finite".into()));
        }
        let rows = table[HEADER + 4 * vocab..]
            .iter()
            .map(|&b| b as i8)
            .collect();
        let tokenizer = crate::load_tokenizer(tokenizer_json)?;
        let tokenizer_vocab = tokenizer.get_vocab_size(true);
        if tokenizer_vocab != vocab {
            return Err(bad(format!(
                "{vocab} rows but the tokenizer has {tokenizer_vocab} entries"
            )));
        }
        let empty_row = tokenizer.token_to_id("[CLS]").map_or(0, |id| id as usize);
        Ok(StaticEmbedder {
            tokenizer,
            scales,
            rows,
            empty_row,
            info: ModelInfo {
                model_id: model_id.to_owned(),
                dims,
            },
        })
    }

    /// The model's id and dimensions.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Embeds one text: the mean of its word pieces' rows, normalized to unit length.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let dims = self.info.dims;
        let mut sum = vec![0f32; dims];
        let ids = encoding.get_ids();
        let empty = [self.empty_row as u32];
        let ids = if ids.is_empty() { &empty[..] } else { ids };
        for &id in ids {
            let row = id as usize;
            let (Some(&scale), Some(values)) = (
                self.scales.get(row),
                self.rows.get(row * dims..(row + 1) * dims),
            ) else {
                return Err(EmbedError::Inference(format!(
                    "token id {id} is outside the table"
                )));
            };
            for (s, &v) in sum.iter_mut().zip(values) {
                *s += f32::from(v) * scale;
            }
        }
        Ok(l2_normalize(sum))
    }
}

impl engram_host::Embed for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.info.model_id
    }

    fn dims(&self) -> usize {
        self.info.dims
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> engram_host::EmbedFuture<'a> {
        Box::pin(async move {
            texts
                .iter()
                .map(|t| StaticEmbedder::embed(self, t).map_err(|e| e.to_string()))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal WordPiece tokenizer.json over `vocab`, split on whitespace.
    fn tokenizer(vocab: &[&str]) -> Vec<u8> {
        let entries: Vec<String> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| format!("\"{t}\":{i}"))
            .collect();
        format!(
            r###"{{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,
            "pre_tokenizer":{{"type":"Whitespace"}},"post_processor":null,"decoder":null,
            "model":{{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##",
            "max_input_chars_per_word":100,"vocab":{{{}}}}}}}"###,
            entries.join(",")
        )
        .into_bytes()
    }

    #[test]
    fn malformed_tables_are_typed_errors() {
        let tokenizer = &tokenizer(&["[UNK]", "a"]);
        let mut table = b"EGST".to_vec();
        for w in [1u32, 2, 3] {
            table.extend(w.to_le_bytes());
        }
        table.extend(1f32.to_le_bytes());
        table.extend(1f32.to_le_bytes());
        table.extend([1u8, 2, 3, 4, 5, 6]);
        let ok = StaticEmbedder::load(&table, tokenizer, "t");
        assert!(ok.is_ok(), "{ok:?}");
        for broken in [
            &table[..table.len() - 1],
            &table[..3],
            &[b"EGSX", &table[4..]].concat()[..],
        ] {
            let err = StaticEmbedder::load(broken, tokenizer, "t").unwrap_err();
            assert!(
                err.to_string().contains("not a static embedding table"),
                "{err}"
            );
        }
        let mut v2 = table.clone();
        v2[4] = 2;
        assert!(StaticEmbedder::load(&v2, tokenizer, "t").is_err());
    }

    #[test]
    fn a_text_is_the_normalized_mean_of_its_rows() {
        let tokenizer = &tokenizer(&["[UNK]", "a", "b"]);
        let mut table = b"EGST".to_vec();
        for w in [1u32, 3, 2] {
            table.extend(w.to_le_bytes());
        }
        for s in [1f32, 0.5, 1.0] {
            table.extend(s.to_le_bytes());
        }
        for v in [0i8, 1, 4, 0, 0, 3] {
            table.push(v as u8);
        }
        let model = StaticEmbedder::load(&table, tokenizer, "t").unwrap();
        // a = (2, 0), b = (0, 3): mean (1, 1.5) normalized.
        let v = model.embed("a b").unwrap();
        let n = (1.0f32 + 2.25).sqrt();
        assert!(
            (v[0] - 1.0 / n).abs() < 1e-6 && (v[1] - 1.5 / n).abs() < 1e-6,
            "{v:?}"
        );
    }
}
