//! Rewrites of the shipped ONNX graph's int8 weight-only quantization, one per footprint:
//! fold it into fp32 initializers at load (fast), or keep the weights int8 and dequantize
//! them as they are used (compact).
//!
//! The shipped ONNX stores each weight matrix as an int8 initializer `W_q`, a `Cast` to
//! float and a `Mul` by a per-row or per-column scale. tract constant-folds the matrices
//! but not the word-embedding table (over its 4 MiB folding budget), so left alone every
//! inference would convert the whole table again. Folding everything once makes the int8
//! file run as fast as the fp32 one, while the download stays 4× smaller.

use std::collections::{HashMap, HashSet};

use tract_onnx::pb::tensor_shape_proto::{dimension, Dimension};
use tract_onnx::pb::{
    type_proto, AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
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
    // Each lookup's output, the table it reads, and the nodes that replace it.
    let rewrites: Vec<(String, Dequantized, Vec<NodeProto>)> = graph
        .node
        .iter()
        .filter(|g| g.op_type == "Gather" && g.input.len() == 2 && g.output.len() == 1)
        .filter(|g| gather_axis(g) == 0)
        .filter_map(|gather| {
            let table = dequantized(graph, &gather.input[0])?;
            let lookup = row_lookup(gather, &table);
            (table.scale_dims == [table.rows, 1]).then(|| (gather.output[0].clone(), table, lookup))
        })
        .collect();
    let replaced: HashSet<&String> = rewrites
        .iter()
        .flat_map(|(_, table, _)| [&table.cast_output, &table.mul_output])
        .collect();
    let mut nodes = Vec::with_capacity(graph.node.len() + 2 * rewrites.len());
    for node in std::mem::take(&mut graph.node) {
        let output = node.output.first();
        if let Some((_, _, lookup)) = rewrites.iter().find(|(o, _, _)| Some(o) == output) {
            nodes.extend(lookup.iter().cloned());
        } else if !output.is_some_and(|o| replaced.contains(o)) {
            nodes.push(node);
        }
    }
    let count = rewrites.len();
    graph.node = nodes;
    Ok(count)
}

/// A float tensor made by `Mul(Cast(W_q), scale)` from an int8 matrix initializer and a
/// float initializer, where the `Cast` and the product each have one reader.
struct Dequantized {
    quantized: String,
    /// The int8 matrix's first dimension.
    rows: i64,
    scale: String,
    scale_dims: Vec<i64>,
    cast_output: String,
    mul_output: String,
}

/// How `name` is made, if it is a [`Dequantized`] int8 matrix read only once.
fn dequantized(graph: &GraphProto, name: &str) -> Option<Dequantized> {
    let producer = |name: &str| {
        graph
            .node
            .iter()
            .find(|n| n.output.iter().any(|o| o == name))
    };
    let readers = |name: &str| {
        graph
            .node
            .iter()
            .filter(|n| n.input.iter().any(|i| i == name))
            .count()
    };
    let initializer = |name: &str| graph.initializer.iter().find(|t| t.name == name);
    let mul = producer(name)?;
    if mul.op_type != "Mul" || mul.input.len() != 2 || readers(name) != 1 {
        return None;
    }
    [(0, 1), (1, 0)].into_iter().find_map(|(c, s)| {
        let cast = producer(&mul.input[c])?;
        let is_cast = cast.op_type == "Cast" && cast.input.len() == 1 && cast.output.len() == 1;
        if !is_cast || cast_to(cast) != Some(FLOAT) || readers(&cast.output[0]) != 1 {
            return None;
        }
        let quantized = initializer(&cast.input[0])?;
        let scale = initializer(&mul.input[s])?;
        let types = quantized.data_type == INT8 && scale.data_type == FLOAT;
        (types && quantized.dims.len() == 2).then(|| Dequantized {
            quantized: quantized.name.clone(),
            rows: quantized.dims[0],
            scale: scale.name.clone(),
            scale_dims: scale.dims.clone(),
            cast_output: cast.output[0].clone(),
            mul_output: name.to_owned(),
        })
    })
}

/// The nodes looking up `gather`'s rows in the int8 table and dequantizing only those; the
/// last one writes `gather`'s output.
fn row_lookup(gather: &NodeProto, table: &Dequantized) -> Vec<NodeProto> {
    let output = &gather.output[0];
    let name = |suffix: &str| format!("{output}_{suffix}");
    let node = |op: &str, inputs: [&str; 2], out: String, attribute: &[AttributeProto]| NodeProto {
        op_type: op.into(),
        name: out.clone(),
        input: inputs
            .iter()
            .filter(|i| !i.is_empty())
            .map(|i| (*i).to_owned())
            .collect(),
        output: vec![out],
        attribute: attribute.to_vec(),
        ..NodeProto::default()
    };
    let to_float = AttributeProto {
        name: "to".into(),
        r#type: 2,
        i: i64::from(FLOAT),
        ..AttributeProto::default()
    };
    let ids = gather.input[1].as_str();
    vec![
        node(
            "Gather",
            [&table.quantized, ids],
            name("rows_q"),
            &gather.attribute,
        ),
        node(
            "Gather",
            [&table.scale, ids],
            name("rows_scale"),
            &gather.attribute,
        ),
        node("Cast", [&name("rows_q"), ""], name("rows_f"), &[to_float]),
        node(
            "Mul",
            [&name("rows_f"), &name("rows_scale")],
            output.clone(),
            &[],
        ),
    ]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
        NodeProto {
            op_type: op.into(),
            input: inputs.iter().map(|i| (*i).to_owned()).collect(),
            output: vec![output.to_owned()],
            ..NodeProto::default()
        }
    }

    fn cast(input: &str, output: &str) -> NodeProto {
        let mut cast = node("Cast", &[input], output);
        cast.attribute.push(AttributeProto {
            name: "to".into(),
            r#type: 2,
            i: i64::from(FLOAT),
            ..AttributeProto::default()
        });
        cast
    }

    fn tensor(name: &str, data_type: i32, dims: &[i64]) -> TensorProto {
        TensorProto {
            name: name.into(),
            data_type,
            dims: dims.to_vec(),
            ..TensorProto::default()
        }
    }

    /// `table = Cast(table_q) · table_scale; out = Gather(table, ids)`.
    fn lookup(scale_dims: &[i64]) -> ModelProto {
        ModelProto {
            graph: Some(GraphProto {
                node: vec![
                    cast("table_q", "table_f"),
                    node("Mul", &["table_f", "table_scale"], "table"),
                    node("Gather", &["table", "ids"], "out"),
                ],
                initializer: vec![
                    tensor("table_q", INT8, &[5, 3]),
                    tensor("table_scale", FLOAT, scale_dims),
                ],
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }
    }

    fn ops(model: &ModelProto) -> Vec<String> {
        let graph = model.graph.as_ref().expect("graph");
        graph.node.iter().map(|n| n.op_type.clone()).collect()
    }

    #[test]
    fn a_lookup_with_row_scales_reads_the_int8_rows() {
        let mut model = lookup(&[5, 1]);
        assert_eq!(gather_int8_rows(&mut model), Ok(1));
        assert_eq!(ops(&model), ["Gather", "Gather", "Cast", "Mul"]);
        let graph = model.graph.as_ref().expect("graph");
        assert_eq!(graph.node[0].input, ["table_q", "ids"]);
        assert_eq!(graph.node[1].input, ["table_scale", "ids"]);
        assert_eq!(graph.node[3].output, ["out"]);
    }

    #[test]
    fn a_lookup_with_column_scales_is_left_alone() {
        let mut model = lookup(&[1, 3]);
        assert_eq!(gather_int8_rows(&mut model), Ok(0));
        assert_eq!(ops(&model), ["Cast", "Mul", "Gather"]);
    }

    #[test]
    fn malformed_nodes_are_skipped_not_a_panic() {
        let mut model = lookup(&[5, 1]);
        let graph = model.graph.as_mut().expect("graph");
        graph.node[0].input.clear();
        assert_eq!(gather_int8_rows(&mut model), Ok(0));
        assert_eq!(int8_weights_as_inputs(&mut model).map(|w| w.len()), Ok(0));
        assert!(gather_int8_rows(&mut ModelProto::default()).is_err());
    }

    #[test]
    fn int8_matrices_read_by_a_cast_become_inputs() {
        let mut model = lookup(&[1, 3]);
        let weights = int8_weights_as_inputs(&mut model).expect("weights");
        assert_eq!(weights.len(), 1);
        assert_eq!(weights[0].name, "table_q");
        let graph = model.graph.as_ref().expect("graph");
        assert_eq!(graph.input.len(), 1);
        assert_eq!(graph.input[0].name, "table_q");
        assert_eq!(graph.initializer.len(), 1);
        assert_eq!(graph.initializer[0].name, "table_scale");
    }
}
