//! Checking what an embedder answers.

use engram_host::Embed;

/// Embeds and checks the answer's shape.
pub(crate) async fn embed_checked(
    embedder: &dyn Embed,
    texts: &[String],
) -> Result<Vec<Vec<f32>>, String> {
    let vectors = embedder.embed(texts).await?;
    if vectors.len() != texts.len() {
        return Err(format!(
            "embedder returned {} vectors for {} texts",
            vectors.len(),
            texts.len()
        ));
    }
    for v in &vectors {
        if v.len() != embedder.dims() {
            return Err(format!(
                "embedder returned {} dimensions, expected {}",
                v.len(),
                embedder.dims()
            ));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err("embedder returned a non-finite value".into());
        }
    }
    Ok(vectors)
}
