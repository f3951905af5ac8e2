//! Windowing and normalization.

/// Splits word pieces into windows of at most `size` pieces with a stride of `size / 2`;
/// a text that fits is one window (an empty text is one empty window).
///
/// ```
/// let pieces: Vec<u32> = (0..10).collect();
/// let w = engram_embed::windows(&pieces, 4);
/// assert_eq!(w, vec![&pieces[0..4], &pieces[2..6], &pieces[4..8], &pieces[6..10]]);
/// ```
pub fn windows(pieces: &[u32], size: usize) -> Vec<&[u32]> {
    let size = size.max(2);
    if pieces.len() <= size {
        return vec![pieces];
    }
    let stride = size / 2;
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + size).min(pieces.len());
        out.push(&pieces[start..end]);
        if end == pieces.len() {
            return out;
        }
        start += stride;
    }
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn l2_normalize(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 {
        v.iter_mut()
            .for_each(|x| *x = (f64::from(*x) / norm) as f32);
    }
    v
}
