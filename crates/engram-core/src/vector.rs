//! Vectors in libSQL's `F32_BLOB` layout (little-endian `f32`s) and the distance libSQL's
//! `vector_distance_cos` computes, so engines without libSQL's vector extension can register
//! identical SQL functions.

/// Why a vector could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VectorError {
    /// The text was not a JSON-style array of numbers.
    #[error("invalid vector text: {0}")]
    Text(String),
    /// The blob length is not a multiple of 4.
    #[error("invalid F32 vector blob of {0} bytes")]
    Blob(usize),
    /// The two vectors differ in length.
    #[error("vector dimensions differ: {0} vs {1}")]
    Dimensions(usize, usize),
}

/// Parses `[1, 2.5, -3e-2]` into floats.
///
/// ```
/// assert_eq!(engram_core::vector::parse_text("[1, -2.5]").unwrap(), vec![1.0, -2.5]);
/// ```
pub fn parse_text(text: &str) -> Result<Vec<f32>, VectorError> {
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| VectorError::Text("must be enclosed in [ ]".into()))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|part| {
            let part = part.trim();
            part.parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| VectorError::Text(format!("{part:?} is not a finite number")))
        })
        .collect()
}

/// Encodes floats as an `F32_BLOB`.
pub fn to_blob(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Decodes an `F32_BLOB`.
pub fn from_blob(blob: &[u8]) -> Result<Vec<f32>, VectorError> {
    if blob.len() % 4 != 0 {
        return Err(VectorError::Blob(blob.len()));
    }
    Ok(blob
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Renders floats as libSQL's `vector_extract` does: `[1,2.5,-3]`.
pub fn to_text(values: &[f32]) -> String {
    let parts: Vec<String> = values.iter().map(|v| format!("{v}")).collect();
    format!("[{}]", parts.join(","))
}

/// Cosine distance `1 − cos(a, b)`, in `[0, 2]`; computed in f64 for stability.
/// A zero vector is at distance 1 from everything.
pub fn cosine_distance(a: &[f32], b: &[f32]) -> Result<f64, VectorError> {
    if a.len() != b.len() {
        return Err(VectorError::Dimensions(a.len(), b.len()));
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return Ok(1.0);
    }
    Ok(1.0 - dot / (na.sqrt() * nb.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_round_trip_and_distance() {
        let v = parse_text("[1,2,3]").unwrap();
        assert_eq!(to_blob(&v).len(), 12);
        assert_eq!(from_blob(&to_blob(&v)).unwrap(), v);
        assert!(cosine_distance(&v, &[2.0, 4.0, 6.0]).unwrap().abs() < 1e-12);
        assert!((cosine_distance(&[1.0, 0.0], &[0.0, 1.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((cosine_distance(&[1.0, 0.0], &[-1.0, 0.0]).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(to_text(&[1.0, 2.5]), "[1,2.5]");
    }

    #[test]
    fn bad_vectors_are_errors() {
        assert!(parse_text("1,2").is_err());
        assert!(parse_text("[1,x]").is_err());
        assert!(parse_text("[1,NaN]").is_err());
        assert_eq!(from_blob(&[0, 0, 0]), Err(VectorError::Blob(3)));
        assert_eq!(
            cosine_distance(&[1.0], &[1.0, 2.0]),
            Err(VectorError::Dimensions(1, 2))
        );
    }
}
