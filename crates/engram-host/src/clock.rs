//! Time and randomness.

/// Wall-clock time.
pub trait Clock {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64;

    /// Microseconds on a monotonic-enough scale, for stage timings only; hosts with a finer
    /// clock override it.
    fn now_micros(&self) -> f64 {
        self.now_millis() as f64 * 1000.0
    }
}

/// Cryptographically secure random bytes.
pub trait Entropy {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]);
}

/// The capabilities every engram needs: a clock and randomness, and a timer where the
/// host has one.
pub struct Host {
    /// Wall-clock time.
    pub clock: Box<dyn Clock>,
    /// Random bytes (memory ids).
    pub entropy: Box<dyn Entropy>,
    /// Waits between the attempts of a write that failed for a passing reason; without it
    /// the attempts follow each other at once.
    pub sleep: Option<Box<dyn crate::Sleep>>,
    /// Whether the files memories cite exist; without it only the code graph says a file
    /// is gone.
    pub files: Option<Box<dyn crate::FileProbe>>,
}

impl Host {
    /// A host from a clock and an entropy source.
    pub fn new(clock: impl Clock + 'static, entropy: impl Entropy + 'static) -> Self {
        Host {
            clock: Box::new(clock),
            entropy: Box::new(entropy),
            sleep: None,
            files: None,
        }
    }

    /// With a probe of the project's files.
    pub fn with_file_probe(mut self, probe: impl crate::FileProbe + 'static) -> Self {
        self.files = Some(Box::new(probe));
        self
    }

    /// With the host's timer.
    pub fn with_sleep(mut self, sleep: impl crate::Sleep + 'static) -> Self {
        self.sleep = Some(Box::new(sleep));
        self
    }

    /// The operating system's clock, randomness and a thread timer.
    #[cfg(feature = "native")]
    pub fn native() -> Self {
        Host::new(SystemClock, OsEntropy).with_sleep(crate::ThreadSleep)
    }
}

/// The system clock.
#[cfg(feature = "native")]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(feature = "native")]
impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }

    fn now_micros(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1e6)
            .unwrap_or(0.0)
    }
}

/// The operating system's random number generator.
#[cfg(feature = "native")]
#[derive(Debug, Clone, Copy, Default)]
pub struct OsEntropy;

#[cfg(feature = "native")]
impl Entropy for OsEntropy {
    fn fill(&self, buf: &mut [u8]) {
        if getrandom::fill(buf).is_err() {
            // The OS generator failing is unrecoverable for id generation; ids would collide.
            panic!("the operating system's random number generator failed");
        }
    }
}
