//! Folds int8 weight-only quantization into fp32 initializers at load time.
//!
//! The shipped ONNX stores each weight matrix as an int8 initializer `W_q`, a `Cast` to
//! float and a `Mul` by a per-row or per-column scale. tract will not constant-fold these
//! (its folding budget is a few MiB), so left alone every inference would convert ~22 M
//! weights again. Folding them once makes the int8 file run as fast as the fp32 one, while
//! the download stays 4× smaller.

use std::collections::HashMap;

use tract_onnx::pb::{ModelProto, NodeProto, TensorProto};

const FLOAT: i32 = 1;
const INT8: i32 = 3;

/// Replaces every `Cast(int8 initializer) → Mul(·, float initializer)` pair by one float
/// initializer holding the product. Returns how many weights were folded.
pub fn fold_int8_weights(model: &mut ModelProto) -> Result<usize, String> {
    let Some(graph) = model.graph.as_mut() else {
        return Err("the model has no graph".into());
    };
    let index: HashMap<String, usize> = graph
        .initializer
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    let mut consumers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, node) in graph.node.iter().enumerate() {
        for input in &node.input {
            consumers.entry(input.as_str()).or_default().push(i);
        }
    }
    let mut folded: Vec<(usize, usize, TensorProto)> = Vec::new();
    for (cast_index, cast) in graph.node.iter().enumerate() {
        if cast.op_type != "Cast" || cast.input.len() != 1 || cast.output.len() != 1 {
            continue;
        }
        let Some(&q_index) = index.get(&cast.input[0]) else {
            continue;
        };
        let quantized = &graph.initializer[q_index];
        if quantized.data_type != INT8 || cast_to(cast) != Some(FLOAT) {
            continue;
        }
        let users = consumers
            .get(cast.output[0].as_str())
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let [mul_index] = users else { continue };
        let mul = &graph.node[*mul_index];
        if mul.op_type != "Mul" || mul.input.len() != 2 || mul.output.len() != 1 {
            continue;
        }
        let scale_name = if mul.input[0] == cast.output[0] {
            &mul.input[1]
        } else {
            &mul.input[0]
        };
        let Some(&s_index) = index.get(scale_name) else {
            continue;
        };
        let scale = &graph.initializer[s_index];
        if scale.data_type != FLOAT {
            continue;
        }
        let weights =
            multiply(quantized, scale).map_err(|e| format!("weight {}: {e}", quantized.name))?;
        folded.push((
            cast_index,
            *mul_index,
            TensorProto {
                name: mul.output[0].clone(),
                dims: quantized.dims.clone(),
                data_type: FLOAT,
                raw_data: weights.iter().flat_map(|w| w.to_le_bytes()).collect(),
                ..TensorProto::default()
            },
        ));
    }
    let count = folded.len();
    let mut removed: Vec<usize> = folded.iter().flat_map(|(c, m, _)| [*c, *m]).collect();
    removed.sort_unstable();
    for i in removed.into_iter().rev() {
        graph.node.remove(i);
    }
    graph
        .initializer
        .extend(folded.into_iter().map(|(_, _, t)| t));
    // Drop initializers nothing reads any more (the int8 tensors and their scales).
    let still_used: std::collections::HashSet<String> = graph
        .node
        .iter()
        .flat_map(|n| n.input.iter().cloned())
        .collect();
    let outputs: std::collections::HashSet<String> =
        graph.output.iter().map(|o| o.name.clone()).collect();
    graph
        .initializer
        .retain(|t| still_used.contains(&t.name) || outputs.contains(&t.name));
    Ok(count)
}

fn cast_to(node: &NodeProto) -> Option<i32> {
    node.attribute
        .iter()
        .find(|a| a.name == "to")
        .map(|a| a.i as i32)
}

/// `q * scale` with NumPy broadcasting for 2-D `q` and a scale of shape `[1, cols]`,
/// `[rows, 1]`, `[1]` or `[]`.
fn multiply(q: &TensorProto, scale: &TensorProto) -> Result<Vec<f32>, String> {
    let values: Vec<i8> = q.raw_data.iter().map(|&b| b as i8).collect();
    let scales = floats(scale)?;
    let (rows, cols) = match q.dims.as_slice() {
        [r, c] => (*r as usize, *c as usize),
        [n] => (1, *n as usize),
        dims => return Err(format!("unsupported weight shape {dims:?}")),
    };
    if values.len() != rows * cols {
        return Err(format!(
            "expected {} int8 values, found {}",
            rows * cols,
            values.len()
        ));
    }
    let scale_at: Box<dyn Fn(usize, usize) -> f32> = match (scale.dims.as_slice(), scales.len()) {
        (_, 1) => Box::new(|_, _| scales[0]),
        ([1, c], _) if *c as usize == cols => Box::new(|_, j| scales[j]),
        ([c], _) if *c as usize == cols => Box::new(|_, j| scales[j]),
        ([r, 1], _) if *r as usize == rows => Box::new(|i, _| scales[i]),
        (dims, _) => {
            return Err(format!(
                "scale shape {dims:?} does not broadcast to [{rows}, {cols}]"
            ))
        }
    };
    let mut out = Vec::with_capacity(values.len());
    for i in 0..rows {
        for j in 0..cols {
            out.push(f32::from(values[i * cols + j]) * scale_at(i, j));
        }
    }
    Ok(out)
}

fn floats(t: &TensorProto) -> Result<Vec<f32>, String> {
    if !t.float_data.is_empty() {
        return Ok(t.float_data.clone());
    }
    if t.raw_data.len() % 4 != 0 {
        return Err(format!(
            "float tensor {} has {} raw bytes",
            t.name,
            t.raw_data.len()
        ));
    }
    Ok(t.raw_data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
