//! Questions to the stored code graph from JavaScript: impact, dependencies, neighbours and
//! stale marks. They are SQL over the graph another host indexed, so every build has them,
//! a Worker's without parsers included.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::errors::to_js_error;
use crate::EngramHandle;

#[wasm_bindgen(js_class = Engram)]
impl EngramHandle {
    /// What a change to `target` (file path, node id or qualified name) impacts, up to
    /// `maxDepth` hops (default 3), with the memories attached. One round trip.
    #[wasm_bindgen(js_name = analyzeImpact, unchecked_return_type = "Promise<ImpactReport>")]
    pub fn analyze_impact(&self, target: String, max_depth: Option<u32>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let report = inner
                .analyze_impact(&target, max_depth.unwrap_or(3))
                .await
                .map_err(|e| to_js_error(&e))?;
            crate::types::to_js(&report)
        })
    }

    /// What `file` depends on, up to `maxDepth` hops (default 3). One round trip.
    #[wasm_bindgen(
        unchecked_return_type = "Promise<{ nodes: LinkedNode[]; files: RelatedFile[] }>"
    )]
    pub fn dependencies(&self, file: String, max_depth: Option<u32>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let (nodes, files) = inner
                .dependencies(&file, max_depth.unwrap_or(3))
                .await
                .map_err(|e| to_js_error(&e))?;
            crate::types::to_js(&serde_json::json!({ "nodes": nodes, "files": files }))
        })
    }

    /// Files one live dependency edge away from `files`. One round trip.
    #[wasm_bindgen(unchecked_return_type = "Promise<Neighbour[]>")]
    pub fn neighbours(&self, files: Vec<String>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let list = inner
                .neighbours(&files)
                .await
                .map_err(|e| to_js_error(&e))?;
            crate::types::to_js(&list)
        })
    }

    /// Marks the graph of `paths` stale (their files changed on disk); resolves to the
    /// number of nodes marked. `indexFiles` clears the mark.
    #[wasm_bindgen(js_name = markStale, unchecked_return_type = "Promise<number>")]
    pub fn mark_stale(&self, paths: Vec<String>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let marked = inner
                .mark_stale(&paths)
                .await
                .map_err(|e| to_js_error(&e))?;
            Ok(JsValue::from_f64(marked as f64))
        })
    }
}
