//! The host's file calls, as the Node entry hands them in (`options.files`, an object of
//! synchronous functions over `node:fs`), for the embedded database's file.

#[cfg(feature = "embedded")]
use engram_sqlite::{FileError, FileHandle, HostFiles};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

#[wasm_bindgen]
extern "C" {
    /// The object of file calls the Node entry passes as `options.files`.
    pub type JsFiles;

    #[wasm_bindgen(method, catch)]
    fn open(this: &JsFiles, path: &str, create: bool) -> Result<u32, JsValue>;
    #[wasm_bindgen(method, catch, js_name = readAt)]
    fn read_at(this: &JsFiles, file: u32, buf: &mut [u8], offset: f64) -> Result<u32, JsValue>;
    #[wasm_bindgen(method, catch, js_name = writeAt)]
    fn write_at(this: &JsFiles, file: u32, data: &[u8], offset: f64) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn truncate(this: &JsFiles, file: u32, size: f64) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn size(this: &JsFiles, file: u32) -> Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn sync(this: &JsFiles, file: u32) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &JsFiles, file: u32) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn exists(this: &JsFiles, path: &str) -> Result<bool, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn remove(this: &JsFiles, path: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch, js_name = createNew)]
    fn create_new(this: &JsFiles, path: &str, contents: &str) -> Result<bool, JsValue>;
    #[wasm_bindgen(method, catch, js_name = readText)]
    fn read_text(this: &JsFiles, path: &str) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn owner(this: &JsFiles) -> Result<String, JsValue>;
    #[wasm_bindgen(method, catch, js_name = ownerAlive)]
    fn owner_alive(this: &JsFiles, owner: &str) -> Result<bool, JsValue>;
}

/// The embedded database's file calls over a [`JsFiles`] object.
// Builds without the embedded engine (the Worker's) take the calls and ignore them.
#[cfg_attr(not(feature = "embedded"), allow(dead_code))]
pub struct NodeFiles(JsFiles);

impl NodeFiles {
    /// The file calls in `value`, when it is an object.
    pub fn from_value(value: JsValue) -> Option<Self> {
        value.is_object().then(|| NodeFiles(value.unchecked_into()))
    }
}

#[cfg(feature = "embedded")]
fn failed(error: JsValue) -> FileError {
    FileError::new(crate::errors::thrown_message(&error, "a file call failed"))
}

#[cfg(feature = "embedded")]
impl HostFiles for NodeFiles {
    fn open(&self, path: &str, create: bool) -> Result<FileHandle, FileError> {
        self.0.open(path, create).map_err(failed)
    }
    fn read_at(&self, file: FileHandle, buf: &mut [u8], offset: u64) -> Result<usize, FileError> {
        self.0
            .read_at(file, buf, offset as f64)
            .map(|n| n as usize)
            .map_err(failed)
    }
    fn write_at(&self, file: FileHandle, data: &[u8], offset: u64) -> Result<(), FileError> {
        self.0.write_at(file, data, offset as f64).map_err(failed)
    }
    fn truncate(&self, file: FileHandle, size: u64) -> Result<(), FileError> {
        self.0.truncate(file, size as f64).map_err(failed)
    }
    fn size(&self, file: FileHandle) -> Result<u64, FileError> {
        self.0.size(file).map(|n| n as u64).map_err(failed)
    }
    fn sync(&self, file: FileHandle) -> Result<(), FileError> {
        self.0.sync(file).map_err(failed)
    }
    fn close(&self, file: FileHandle) -> Result<(), FileError> {
        self.0.close(file).map_err(failed)
    }
    fn exists(&self, path: &str) -> Result<bool, FileError> {
        self.0.exists(path).map_err(failed)
    }
    fn remove(&self, path: &str) -> Result<(), FileError> {
        self.0.remove(path).map_err(failed)
    }
    fn create_new(&self, path: &str, contents: &str) -> Result<bool, FileError> {
        self.0.create_new(path, contents).map_err(failed)
    }
    fn read_text(&self, path: &str) -> Result<Option<String>, FileError> {
        self.0.read_text(path).map_err(failed)
    }
    fn owner(&self) -> String {
        self.0.owner().unwrap_or_else(|_| "unknown".to_owned())
    }
    fn owner_alive(&self, owner: &str) -> bool {
        self.0.owner_alive(owner).unwrap_or(true)
    }
}
