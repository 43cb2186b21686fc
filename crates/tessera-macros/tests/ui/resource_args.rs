use tessera_macros::resource;

/// Neither `uri` nor `template`.
#[resource(mime_type = "text/plain")]
async fn nowhere() -> String {
    String::new()
}

/// A URI with a variable: a template was meant.
#[resource(uri = "users://{id}")]
async fn user() -> String {
    String::new()
}

/// Both.
#[resource(uri = "docs://a", template = "docs://{name}")]
async fn both() -> String {
    String::new()
}

fn main() {}
