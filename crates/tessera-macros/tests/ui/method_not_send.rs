use std::cell::RefCell;
use std::rc::Rc;

use tessera_macros::tools;

async fn pause() {}

struct Server;

#[tools]
impl Server {
    /// Holds an `Rc` across an `.await`.
    #[tool]
    async fn count(&self) -> String {
        let cell = Rc::new(RefCell::new(0));
        pause().await;
        cell.borrow().to_string()
    }
}

fn main() {}
