//! libSQL's vector functions as SQLite scalar functions.

use engram_core::vector::{self, VectorError};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;

/// Registers `vector32`, `vector` (alias), `vector_extract` and `vector_distance_cos`.
pub fn register_vector_functions(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    for name in ["vector32", "vector"] {
        conn.create_scalar_function(name, 1, flags, |ctx| {
            Ok(vector::to_blob(&arg_vector(ctx, 0)?))
        })?;
    }
    conn.create_scalar_function("vector_extract", 1, flags, |ctx| {
        Ok(vector::to_text(&arg_vector(ctx, 0)?))
    })?;
    conn.create_scalar_function("vector_distance_cos", 2, flags, |ctx| {
        let a = arg_vector(ctx, 0)?;
        let b = arg_vector(ctx, 1)?;
        vector::cosine_distance(&a, &b).map_err(user_error)
    })?;
    Ok(())
}

fn arg_vector(ctx: &Context<'_>, i: usize) -> rusqlite::Result<Vec<f32>> {
    match ctx.get_raw(i) {
        ValueRef::Text(t) => vector::parse_text(&String::from_utf8_lossy(t)).map_err(user_error),
        ValueRef::Blob(b) => vector::from_blob(b).map_err(user_error),
        _ => Err(user_error(VectorError::Text(
            "expected a vector as text or F32 blob".into(),
        ))),
    }
}

fn user_error(e: VectorError) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(Box::new(e))
}
