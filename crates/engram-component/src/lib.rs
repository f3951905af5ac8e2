//! The `engram:memory` component: the engram API exported through WIT, storing into a libSQL
//! server through the host's `wasi:http`.
//!
//! Component calls are synchronous, and so is `wasi:http` here (the transport blocks on the
//! response pollable), so each engram future completes without ever pending; [`run`] polls
//! it to completion and reports a would-block as an error instead of spinning.

mod http;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ::engram::{Engram, EngramConfig, EngramError, Host, SearchQuery};
use engram_hrana::HranaClient;

wit_bindgen::generate!({
    world: "engram",
    path: "../../wit",
});

use crate::engram::memory::types::Violation;
use exports::engram::memory::api::{Error, Options};
use exports::engram::memory::api::{Guest, GuestEngram};

struct Component;

/// One open engram.
pub struct EngramResource {
    inner: Engram<HranaClient<http::WasiHttpTransport>>,
}

impl Guest for Component {
    type Engram = EngramResource;
}

impl GuestEngram for EngramResource {
    fn open(options: Options) -> Result<exports::engram::memory::api::Engram, Error> {
        let db = HranaClient::new(http::WasiHttpTransport, &options.url, options.auth_token);
        let config = EngramConfig {
            project_id: options.project_id.unwrap_or_else(|| "default".to_owned()),
        };
        let inner = run(Engram::open(db, config, Host::native()))?;
        Ok(exports::engram::memory::api::Engram::new(EngramResource {
            inner,
        }))
    }

    fn remember(&self, memory_json: String) -> Result<String, Error> {
        let stored = run(self.inner.remember_json(&memory_json))?;
        to_json(&stored)
    }

    fn search(&self, query_json: String) -> Result<String, Error> {
        let query = SearchQuery::from_json(&query_json).map_err(|e| convert(&e.into()))?;
        let response = run(self.inner.search(&query))?;
        to_json(&response)
    }

    fn get(&self, id: String) -> Result<Option<String>, Error> {
        match run(self.inner.get(&id))? {
            Some(memory) => to_json(&memory).map(Some),
            None => Ok(None),
        }
    }

    fn forget(&self, id: String) -> Result<bool, Error> {
        run(self.inner.forget(&id))
    }
}

/// Drives a future that never pends (all I/O below it blocks) to completion.
fn run<T>(future: impl Future<Output = Result<T, EngramError>>) -> Result<T, Error> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(result) => result.map_err(|e| convert(&e)),
        Poll::Pending => Err(Error {
            code: "storage_error".into(),
            message: "internal: an operation tried to suspend inside a synchronous component call"
                .into(),
            violations: Vec::new(),
        }),
    }
}

fn convert(error: &EngramError) -> Error {
    Error {
        code: error.code().to_owned(),
        message: error.to_string(),
        violations: error
            .violations()
            .iter()
            .map(|v| Violation {
                field: v.field.clone(),
                problem: v.problem.clone(),
            })
            .collect(),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|e| Error {
        code: "storage_error".into(),
        message: format!("cannot encode result: {e}"),
        violations: Vec::new(),
    })
}

export!(Component);
