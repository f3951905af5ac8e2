//! Values, statements and result rows.

use crate::StoreError;

/// A SQLite value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A 64-bit float.
    Float(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Integer(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Integer(i64::from(v))
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Integer(i64::from(v))
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// One SQL statement with positional parameters (`?1`, `?2`, … or `?`).
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The SQL text. It never contains user data; values go in `params`.
    pub sql: String,
    /// Bound parameters.
    pub params: Vec<Value>,
}

impl Statement {
    /// A statement with no parameters.
    pub fn new(sql: impl Into<String>) -> Self {
        Statement {
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    /// A statement with parameters.
    pub fn with_params(sql: impl Into<String>, params: Vec<Value>) -> Self {
        Statement {
            sql: sql.into(),
            params,
        }
    }
}

/// The result of one statement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Rows of values, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
    /// Rows changed by an INSERT, UPDATE or DELETE.
    pub affected_row_count: u64,
    /// The rowid of the last INSERT, when there was one.
    pub last_insert_rowid: Option<i64>,
}

impl Rows {
    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Result<usize, StoreError> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| StoreError::Decode(format!("no column named {name}")))
    }
}

impl Value {
    /// The integer, or a decode error naming `what`.
    pub fn as_i64(&self, what: &str) -> Result<i64, StoreError> {
        match self {
            Value::Integer(v) => Ok(*v),
            other => Err(StoreError::Decode(format!(
                "{what}: expected integer, got {other:?}"
            ))),
        }
    }

    /// The number (integers widen), or a decode error naming `what`.
    pub fn as_f64(&self, what: &str) -> Result<f64, StoreError> {
        match self {
            Value::Float(v) => Ok(*v),
            Value::Integer(v) => Ok(*v as f64),
            other => Err(StoreError::Decode(format!(
                "{what}: expected number, got {other:?}"
            ))),
        }
    }

    /// The text, or a decode error naming `what`.
    pub fn as_text(&self, what: &str) -> Result<&str, StoreError> {
        match self {
            Value::Text(v) => Ok(v),
            other => Err(StoreError::Decode(format!(
                "{what}: expected text, got {other:?}"
            ))),
        }
    }

    /// The text, `None` for NULL, or a decode error naming `what`.
    pub fn as_opt_text(&self, what: &str) -> Result<Option<&str>, StoreError> {
        match self {
            Value::Null => Ok(None),
            other => other.as_text(what).map(Some),
        }
    }
}
