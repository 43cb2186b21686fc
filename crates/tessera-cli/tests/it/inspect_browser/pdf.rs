//! A PDF resource in the Resources tab: kept on the sandbox origin and shown
//! by the browser's own PDF viewer in a frame of that origin (a server built
//! here with the library, serving one PDF, over Streamable HTTP).

use serde_json::json;
use tessera::server::{Blob, Server, resource};

use super::webdriver::Session;
use super::{common, in_browser, text_has};

/// A one-page PDF that says "tessera".
const PDF: &[u8] = b"%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj
4 0 obj << /Length 44 >> stream
BT /F1 24 Tf 72 72 Td (tessera) Tj ET
endstream endobj
5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj
trailer << /Root 1 0 R >>
%%EOF
";

/// A server with one resource, `test://doc.pdf`; its `/mcp` URL.
async fn pdf_server() -> String {
    let server = Server::builder()
        .name_version("pdf-server", "1.0.0")
        .resource(
            resource("test://doc.pdf", "A PDF")
                .mime_type("application/pdf")
                .handler(|| async { Blob(PDF.to_vec()) }),
        )
        .build()
        .unwrap();
    super::fixture::serve_in_process(server).await
}

// The server runs on this runtime: the test's blocking waits must not stall it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_resource_is_shown_by_the_browsers_viewer_from_the_sandbox_origin() {
    let url = pdf_server().await;
    let inspector =
        tokio::task::spawn_blocking(move || common::start_inspect(&[&url], super::fixture::START))
            .await
            .unwrap();
    in_browser("pdf", async |b: &Session| {
        b.goto(&inspector.url).await;
        b.wait_for("document.body.dataset.ready === 'true' && document.querySelectorAll('#conn-select option[value]').length > 0 && document.getElementById('conn-select').value !== ''")
            .await;
        b.click("#tab-resources").await;
        b.click("#res-list [data-uri='test://doc.pdf']").await;
        b.wait_for(&text_has("#res-view", "Show the PDF")).await;
        b.click("#res-view [data-action=pdf]").await;
        b.wait_for("document.querySelector('#res-view iframe.pdf-view')")
            .await;
        let origins = b
            .run(
                "return [location.origin, new URL(document.querySelector('#res-view iframe.pdf-view').src).origin]",
                json!([]),
            )
            .await;
        assert_ne!(origins[0], origins[1], "the PDF must come from the sandbox origin");
        b.enter_frame("#res-view iframe.pdf-view").await;
        // The browser's viewer, not a download: a download never commits a
        // document to the frame, which keeps its blank one (`text/html`);
        // the viewer's document is the PDF's own. (Chromium's viewer used to
        // link `pdf_embedder.css` into it; 156.0.8078.129 no longer does.)
        let kind = b
            .wait_for("document.contentType === 'application/pdf' && document.contentType")
            .await;
        assert_eq!(kind, "application/pdf");
        b.leave_frames().await;
    })
    .await;
}
