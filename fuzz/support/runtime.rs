//! The one current-thread tokio runtime a fuzz target drives its async code
//! on, made once per process (every input reuses it).

use std::sync::OnceLock;

/// The process's runtime.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    })
}
