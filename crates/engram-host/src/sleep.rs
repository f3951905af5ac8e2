//! Waiting, for retries with backoff.

use std::future::Future;
use std::pin::Pin;

/// The future a [`Sleep`] implementation returns.
pub type SleepFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Waits without blocking the host: a timer of the host's event loop (`setTimeout`,
/// tokio, `wasi:clocks`). engram waits between the attempts of a write that failed for a
/// reason that passes (a restarting server, a busy lock).
pub trait Sleep {
    /// Resolves after about `millis` milliseconds.
    fn sleep(&self, millis: u64) -> SleepFuture<'_>;
}

/// A timer on a thread of its own, for native hosts on any executor (or none): the future
/// is woken when the thread's sleep ends.
#[cfg(feature = "native")]
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleep;

#[cfg(feature = "native")]
impl Sleep for ThreadSleep {
    fn sleep(&self, millis: u64) -> SleepFuture<'_> {
        Box::pin(native::Timer::new(millis))
    }
}

#[cfg(feature = "native")]
mod native {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;

    #[derive(Default)]
    struct Shared {
        done: bool,
        waker: Option<Waker>,
    }

    /// Starts its thread on the first poll.
    pub(super) struct Timer {
        millis: u64,
        shared: Option<Arc<Mutex<Shared>>>,
    }

    impl Timer {
        pub(super) fn new(millis: u64) -> Self {
            Timer {
                millis,
                shared: None,
            }
        }
    }

    impl Future for Timer {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.millis == 0 {
                return Poll::Ready(());
            }
            let millis = self.millis;
            let shared = self
                .shared
                .get_or_insert_with(|| {
                    let shared = Arc::new(Mutex::new(Shared::default()));
                    let theirs = Arc::clone(&shared);
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(millis));
                        // A poisoned lock only means a waiter panicked; wake nobody then.
                        if let Ok(mut state) = theirs.lock() {
                            state.done = true;
                            if let Some(waker) = state.waker.take() {
                                waker.wake();
                            }
                        }
                    });
                    shared
                })
                .clone();
            let Ok(mut state) = shared.lock() else {
                return Poll::Ready(());
            };
            if state.done {
                Poll::Ready(())
            } else {
                state.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
