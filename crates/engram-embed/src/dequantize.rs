//! Folds int8 weight-only quantization into fp32 initializers at load time.
//!
//! The shipped ONNX stores each weight matrix as an int8 initializer `W_q`, a `Cast` to
//! float and a `Mul` by a per-row or per-column scale. tract will not constant-fold these
//! (its folding budget is a few MiB), so left alone every inference would convert ~22 M
//! weights again. Folding them once makes the int8 file run as fast as the fp32 one, while
//! the download stays 4× smaller.

use std::collections::HashMap;

use std::collections::HashSet;

use tract_onnx::pb::tensor_shape_proto::{dimension, Dimension};
use tract_onnx::pb::{
    type_proto, ModelProto, NodeProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

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

/// Rewrites each lookup into an int8 table, `Gather(Mul(Cast(W_q), scale), ids)` with a
/// per-row scale, into `Mul(Cast(Gather(W_q, ids)), Gather(scale, ids))`: the table stays
/// int8 in memory and a text dequantizes only the rows it looks up. The word-embedding
/// table is half of MiniLM's weights. Returns how many lookups were rewritten.
pub fn gather_int8_rows(model: &mut ModelProto) -> Result<usize, String> {
    let Some(graph) = model.graph.as_mut() else {
        return Err("the model has no graph".into());
    };
    let initializer = |name: &str| graph.initializer.iter().find(|t| t.name == name);
    let producer = |name: &str| {
        graph
            .node
            .iter()
            .position(|n| n.output.iter().any(|o| o == name))
    };
    let readers = |name: &str| {
        graph
            .node
            .iter()
            .filter(|n| n.input.iter().any(|i| i == name))
            .count()
    };
    let mut rewrites: Vec<(usize, usize, usize, [NodeProto; 4])> = Vec::new();
    for (gather_index, gather) in graph.node.iter().enumerate() {
        let single_output = gather.output.len() == 1;
        if gather.op_type != "Gather"
            || gather.input.len() != 2
            || !single_output
            || gather_axis(gather) != 0
        {
            continue;
        }
        let table = &gather.input[0];
        let Some(mul_index) = producer(table) else {
            continue;
        };
        let mul = &graph.node[mul_index];
        if mul.op_type != "Mul" || mul.input.len() != 2 || readers(table) != 1 {
            continue;
        }
        let Some((cast_index, scale_name)) = [(0, 1), (1, 0)].into_iter().find_map(|(c, s)| {
            let cast_index = producer(&mul.input[c])?;
            let cast = &graph.node[cast_index];
            let is_cast = cast.op_type == "Cast" && cast.input.len() == 1 && cast.output.len() == 1;
            (is_cast && cast_to(cast) == Some(FLOAT) && readers(&cast.output[0]) == 1)
                .then(|| (cast_index, mul.input[s].clone()))
        }) else {
            continue;
        };
        let cast = &graph.node[cast_index];
        let (Some(quantized), Some(scale)) =
            (initializer(&cast.input[0]), initializer(&scale_name))
        else {
            continue;
        };
        let rows = quantized.dims.first().copied();
        if quantized.data_type != INT8 || quantized.dims.len() != 2 || scale.data_type != FLOAT {
            continue;
        }
        if scale.dims.len() != 2 || scale.dims[1] != 1 || Some(scale.dims[0]) != rows {
            continue;
        }
        let name = |suffix: &str| format!("{}_{suffix}", gather.output[0]);
        let node = |op: &str, inputs: Vec<String>, output: String, attribute| NodeProto {
            op_type: op.into(),
            name: output.clone(),
            input: inputs,
            output: vec![output],
            attribute,
            ..NodeProto::default()
        };
        let ids = gather.input[1].clone();
        rewrites.push((
            gather_index,
            mul_index,
            cast_index,
            [
                node(
                    "Gather",
                    vec![cast.input[0].clone(), ids.clone()],
                    name("rows_q"),
                    gather.attribute.clone(),
                ),
                node(
                    "Gather",
                    vec![scale_name.clone(), ids],
                    name("rows_scale"),
                    gather.attribute.clone(),
                ),
                node(
                    "Cast",
                    vec![name("rows_q")],
                    name("rows_f"),
                    cast.attribute.clone(),
                ),
                node(
                    "Mul",
                    vec![name("rows_f"), name("rows_scale")],
                    gather.output[0].clone(),
                    vec![],
                ),
            ],
        ));
    }
    let count = rewrites.len();
    let replaced: std::collections::HashSet<String> = rewrites
        .iter()
        .flat_map(|(gather, mul, cast, _)| [gather, mul, cast])
        .filter_map(|&i| graph.node[i].output.first().cloned())
        .collect();
    let mut nodes = Vec::with_capacity(graph.node.len() + 2 * count);
    for node in std::mem::take(&mut graph.node) {
        if let Some((_, _, _, lookup)) = rewrites
            .iter()
            .find(|(_, _, _, lookup)| lookup[3].output == node.output)
        {
            nodes.extend(lookup.iter().cloned());
        } else if !node.output.first().is_some_and(|o| replaced.contains(o)) {
            nodes.push(node);
        }
    }
    graph.node = nodes;
    Ok(count)
}

/// The ONNX type of an int8 tensor of shape `dims`.
fn int8_type(dims: &[i64]) -> TypeProto {
    let dim = dims
        .iter()
        .map(|&d| Dimension {
            value: Some(dimension::Value::DimValue(d)),
            ..Dimension::default()
        })
        .collect();
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: INT8,
            shape: Some(TensorShapeProto { dim }),
        })),
        ..TypeProto::default()
    }
}

fn gather_axis(node: &NodeProto) -> i64 {
    node.attribute
        .iter()
        .find(|a| a.name == "axis")
        .map_or(0, |a| a.i)
}

/// Turns every int8 weight matrix that is dequantized by a `Cast` into an input of the
/// graph, so the weights reach the plan as they are stored and each run dequantizes one
/// matrix at a time: tract folds a `Cast` of a constant into an f32 constant, four times
/// the size. Returns the weights in the order their inputs were appended.
pub fn int8_weights_as_inputs(model: &mut ModelProto) -> Result<Vec<TensorProto>, String> {
    let Some(graph) = model.graph.as_mut() else {
        return Err("the model has no graph".into());
    };
    let cast_inputs: HashSet<&String> = graph
        .node
        .iter()
        .filter(|n| n.op_type == "Cast" && n.input.len() == 1 && cast_to(n) == Some(FLOAT))
        .map(|n| &n.input[0])
        .collect();
    let is_weight =
        |t: &TensorProto| t.data_type == INT8 && t.dims.len() == 2 && cast_inputs.contains(&t.name);
    let (weights, kept): (Vec<TensorProto>, Vec<TensorProto>) =
        std::mem::take(&mut graph.initializer)
            .into_iter()
            .partition(is_weight);
    graph.initializer = kept;
    graph.input.extend(weights.iter().map(|w| ValueInfoProto {
        name: w.name.clone(),
        r#type: Some(int8_type(&w.dims)),
        ..ValueInfoProto::default()
    }));
    Ok(weights)
}
