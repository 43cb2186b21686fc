use tessera_macros::prompt;

/// A prompt returns messages (or text), not a number.
#[prompt]
async fn lucky_number() -> u32 {
    7
}

fn main() {
    let _ = tessera_server::Server::builder().prompt(lucky_number_prompt());
}
