//! all-MiniLM-L6-v2 (int8 weight-only ONNX) in tract.

use std::io::Cursor;

use tokenizers::Tokenizer;
use tract_onnx::pb::ModelProto;
use tract_onnx::prelude::*;

use crate::{dequantize, l2_normalize, windows, EmbedError, ModelInfo, BUCKETS, MAX_TOKENS};

/// How a loaded transformer spends memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Footprint {
    /// Every weight dequantized to f32 at load and one plan per length in [`BUCKETS`],
    /// built on first use: the fastest per text, about 210 MiB resident with one plan and
    /// 45 MiB more per further plan.
    #[default]
    Fast,
    /// For hosts with a hard memory limit (a Worker's 128 MB): the weights stay int8. The
    /// word-embedding table (half of them) dequantizes only the rows a text looks up; the
    /// matrices are inputs of every run, which dequantizes and packs one at a time, so the
    /// plans hold no copy of them and cost little each.
    Compact,
}

impl std::str::FromStr for Footprint {
    type Err = EmbedError;

    /// `fast` or `compact`.
    fn from_str(name: &str) -> Result<Self, EmbedError> {
        match name {
            "fast" => Ok(Footprint::Fast),
            "compact" => Ok(Footprint::Compact),
            other => Err(EmbedError::Model(format!(
                "unknown footprint {other:?}: expected \"fast\" or \"compact\""
            ))),
        }
    }
}

/// A loaded model, ready to embed.
pub struct Embedder {
    /// The decluttered model with the batch fixed at 1 and the sequence axis symbolic.
    typed: TypedModel,
    sequence: Symbol,
    /// One optimized plan per padded length in [`BUCKETS`], built on first use.
    plans: [std::sync::OnceLock<Result<std::sync::Arc<TypedRunnableModel>, String>>; BUCKETS.len()],
    /// The int8 weight matrices the compact footprint passes to every run after the three
    /// token inputs; empty for the fast one, whose weights are folded into its plans.
    weights: Vec<TValue>,
    tokenizer: Tokenizer,
    cls: u32,
    sep: u32,
    info: ModelInfo,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("info", &self.info)
            .finish()
    }
}

impl Embedder {
    /// Loads a BERT-style sentence embedder from ONNX bytes (inputs `input_ids`,
    /// `attention_mask`, `token_type_ids`; output `last_hidden_state`) and a Hugging Face
    /// `tokenizer.json`. Int8 weights stored as `Cast`·`Mul(scale)` are dequantized once here,
    /// so inference runs at fp32 speed.
    pub fn load(onnx: &[u8], tokenizer_json: &[u8], model_id: &str) -> Result<Self, EmbedError> {
        Self::load_with(onnx, tokenizer_json, model_id, Footprint::Fast)
    }

    /// [`Embedder::load`] with the memory [`Footprint`] the host can afford.
    pub fn load_with(
        onnx: &[u8],
        tokenizer_json: &[u8],
        model_id: &str,
        footprint: Footprint,
    ) -> Result<Self, EmbedError> {
        Self::from_proto(parse(onnx)?, tokenizer_json, model_id, footprint)
    }

    /// [`Embedder::load_with`] taking the ONNX bytes by value, freed as soon as they are
    /// parsed: where the peak of memory is the limit (a Worker's module never gives memory
    /// back, so its peak is what it keeps).
    pub fn load_owned(
        onnx: Vec<u8>,
        tokenizer_json: &[u8],
        model_id: &str,
        footprint: Footprint,
    ) -> Result<Self, EmbedError> {
        let proto = parse(&onnx)?;
        drop(onnx);
        Self::from_proto(proto, tokenizer_json, model_id, footprint)
    }

    fn from_proto(
        mut proto: ModelProto,
        tokenizer_json: &[u8],
        model_id: &str,
        footprint: Footprint,
    ) -> Result<Self, EmbedError> {
        let tokenizer = crate::load_tokenizer(tokenizer_json)?;
        let token = |name: &str| {
            tokenizer
                .token_to_id(name)
                .ok_or_else(|| EmbedError::Tokenizer(format!("vocabulary has no {name} token")))
        };
        let (cls, sep) = (token("[CLS]")?, token("[SEP]")?);
        let weights = match footprint {
            Footprint::Fast => dequantize::fold_int8_weights(&mut proto).map(|_| Vec::new()),
            Footprint::Compact => dequantize::gather_int8_rows(&mut proto)
                .and_then(|_| dequantize::int8_weights_as_inputs(&mut proto)),
        }
        .map_err(EmbedError::Model)?;
        let weights = weights
            .into_iter()
            .map(|w| int8_tensor(&w))
            .collect::<Result<Vec<_>, _>>()?;
        let (typed, seq) = decluttered(proto, &weights)?;
        let mut embedder = Embedder {
            typed,
            sequence: seq,
            plans: Default::default(),
            weights: weights.into_iter().map(IntoTValue::into_tvalue).collect(),
            tokenizer,
            cls,
            sep,
            info: ModelInfo {
                model_id: model_id.to_owned(),
                dims: 0,
            },
        };
        embedder.info.dims = embedder.embed("dimension probe")?.len();
        Ok(embedder)
    }

    /// The model's id and dimensions.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The word pieces of `text` (no special tokens), as the model sees them.
    pub fn word_pieces(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))
    }

    /// Embeds one text: a unit-length vector of [`ModelInfo::dims`] floats.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let pieces = self.word_pieces(text)?;
        let mut sum: Vec<f32> = Vec::new();
        let parts = windows(&pieces, MAX_TOKENS - 2);
        for window in &parts {
            let pooled = self.pooled(window)?;
            if sum.is_empty() {
                sum = pooled;
            } else {
                sum.iter_mut().zip(pooled).for_each(|(s, p)| *s += p);
            }
        }
        let n = parts.len().max(1) as f32;
        sum.iter_mut().for_each(|v| *v /= n);
        Ok(l2_normalize(sum))
    }

    /// Embeds several texts.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|t| self.embed(t)).collect()
    }

    /// The optimized plan for inputs of `len` tokens and the padded length it runs at.
    fn plan(&self, len: usize) -> Result<(std::sync::Arc<TypedRunnableModel>, usize), EmbedError> {
        let slot = BUCKETS.iter().position(|&b| b >= len).ok_or_else(|| {
            EmbedError::Inference(format!("{len} tokens exceed the model's {MAX_TOKENS}"))
        })?;
        let padded = BUCKETS[slot];
        let plan = self.plans[slot].get_or_init(|| {
            let subs = std::collections::HashMap::from([(self.sequence.clone(), padded.to_dim())]);
            self.typed
                .set_symbols(&subs)
                .and_then(|m| m.into_optimized())
                .and_then(|m| m.into_runnable())
                .map_err(|e| format!("{e:#}"))
        });
        match plan {
            Ok(plan) => Ok((plan.clone(), padded)),
            Err(e) => Err(EmbedError::Model(e.clone())),
        }
    }

    /// Runs one window and mean-pools the hidden states of its real (unpadded) tokens.
    fn pooled(&self, window: &[u32]) -> Result<Vec<f32>, EmbedError> {
        let n = window.len() + 2;
        let (plan, padded) = self.plan(n)?;
        let mut ids: Vec<i64> = vec![0; padded];
        ids[0] = i64::from(self.cls);
        for (slot, &id) in ids[1..].iter_mut().zip(window) {
            *slot = i64::from(id);
        }
        ids[n - 1] = i64::from(self.sep);
        let mut mask = vec![0i64; padded];
        mask[..n].fill(1);
        let tensor =
            |values: Vec<i64>| Tensor::from_shape(&[1, padded], &values).map_err(inference_error);
        let mut inputs: TVec<TValue> = tvec!(
            tensor(ids)?.into(),
            tensor(mask)?.into(),
            tensor(vec![0; padded])?.into()
        );
        inputs.extend(self.weights.iter().cloned());
        let outputs = plan.run(inputs).map_err(inference_error)?;
        let hidden = outputs[0]
            .to_plain_array_view::<f32>()
            .map_err(inference_error)?;
        let shape = hidden.shape().to_vec();
        if shape.len() != 3 || shape[1] != padded {
            return Err(EmbedError::Inference(format!(
                "unexpected output shape {shape:?}"
            )));
        }
        let dims = shape[2];
        let mut pooled = vec![0f32; dims];
        for token in 0..n {
            for (d, p) in pooled.iter_mut().enumerate() {
                *p += hidden[[0, token, d]];
            }
        }
        pooled.iter_mut().for_each(|p| *p /= n as f32);
        Ok(pooled)
    }
}

fn parse(onnx: &[u8]) -> Result<ModelProto, EmbedError> {
    tract_onnx::onnx()
        .proto_model_for_read(&mut Cursor::new(onnx))
        .map_err(model_error)
}

/// The typed, decluttered model with the batch fixed at 1 and its sequence symbol. Inputs
/// after the three token inputs take `weights`, in order. The proto is freed once read.
fn decluttered(proto: ModelProto, weights: &[Tensor]) -> Result<(TypedModel, Symbol), EmbedError> {
    let framework = tract_onnx::onnx();
    let mut model = framework
        .model_for_proto_model(&proto)
        .map_err(model_error)?;
    let batch = model.symbols.sym(&axis_name(&proto, 0, "batch"));
    let seq = model.symbols.sym(&axis_name(&proto, 1, "sequence"));
    drop(proto);
    for input in 0..3 {
        model
            .set_input_fact(input, i64::fact([batch.to_dim(), seq.to_dim()]).into())
            .map_err(model_error)?;
    }
    for (input, weight) in weights.iter().enumerate() {
        model
            .set_input_fact(3 + input, InferenceFact::dt_shape_from_tensor(weight))
            .map_err(model_error)?;
    }
    let typed = model
        .into_typed()
        .and_then(|m| m.set_symbols(&std::collections::HashMap::from([(batch, 1.to_dim())])))
        .and_then(|m| m.into_decluttered())
        .map_err(model_error)?;
    Ok((typed, seq))
}

/// The `dim_param` of an axis of the first input (`batch`, `sequence`). Input facts must use
/// the model's own axis names: its internal shape rules refer to them, and fresh symbols
/// could not be unified with them.
fn axis_name(proto: &ModelProto, axis: usize, fallback: &str) -> String {
    use tract_onnx::pb::tensor_shape_proto::dimension::Value;
    use tract_onnx::pb::type_proto::Value as TypeValue;
    proto
        .graph
        .as_ref()
        .and_then(|g| g.input.first())
        .and_then(|input| input.r#type.as_ref())
        .and_then(|t| match &t.value {
            Some(TypeValue::TensorType(tensor)) => tensor.shape.as_ref(),
            _ => None,
        })
        .and_then(|shape| shape.dim.get(axis))
        .and_then(|dim| match &dim.value {
            Some(Value::DimParam(name)) => Some(name.clone()),
            _ => None,
        })
        .unwrap_or_else(|| fallback.to_owned())
}

/// An int8 initializer as a tract tensor of its shape.
fn int8_tensor(proto: &tract_onnx::pb::TensorProto) -> Result<Tensor, EmbedError> {
    let shape: Vec<usize> = proto.dims.iter().map(|&d| d as usize).collect();
    let values: Vec<i8> = proto.raw_data.iter().map(|&b| b as i8).collect();
    Tensor::from_shape(&shape, &values).map_err(model_error)
}

fn model_error(e: TractError) -> EmbedError {
    EmbedError::Model(format!("{e:#}"))
}

fn inference_error(e: TractError) -> EmbedError {
    EmbedError::Inference(format!("{e:#}"))
}
