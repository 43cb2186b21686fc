//! The list methods, one page at a time or every page.
//!
//! Following `nextCursor` stops with an error when a cursor comes back a
//! second time ([`ClientError::CursorLoop`]) or after
//! [`ClientBuilder::max_pages`](crate::ClientBuilder::max_pages) pages. Each
//! page is cached on its own when the cache is on; when the server refuses a
//! cursor it issued (`-32602`), the cached pages of that list are dropped and
//! the list is fetched again from the start, once.

use std::collections::HashSet;
use tessera_types::methods;

use serde::de::DeserializeOwned;
use tessera_types::{
    Cursor, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool,
};

use crate::client::{Client, decode};
use crate::error::ClientError;
use crate::members::write;
use crate::options::CallOptions;

impl Client {
    async fn page<P: DeserializeOwned>(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<P, ClientError> {
        let params = write(&PaginatedRequestParams {
            meta: None,
            cursor: cursor.map(str::to_owned),
        });
        let raw = self
            .send(method, Some(params), &CallOptions::default())
            .await?;
        decode(method, raw)
    }

    async fn collect<P, T>(
        &self,
        method: &str,
        split: fn(P) -> (Vec<T>, Option<Cursor>),
    ) -> Result<Vec<T>, ClientError>
    where
        P: DeserializeOwned,
    {
        let mut restarted = false;
        'from_start: loop {
            let mut items = Vec::new();
            let mut seen = HashSet::new();
            let mut cursor: Option<String> = None;
            let mut pages = 0;
            loop {
                pages += 1;
                if pages > self.inner.settings.max_pages {
                    return Err(ClientError::TooManyPages {
                        method: method.to_owned(),
                        pages: self.inner.settings.max_pages,
                    });
                }
                let page = match self.page::<P>(method, cursor.as_deref()).await {
                    Ok(p) => p,
                    Err(e) => {
                        let stale_cursor = cursor.is_some()
                            && e.remote().is_some_and(|r| r.code == -32602)
                            && self.inner.shared.cache.is_some();
                        if stale_cursor && !restarted {
                            restarted = true;
                            if let Some(c) = &self.inner.shared.cache {
                                c.invalidate_method(method);
                            }
                            continue 'from_start;
                        }
                        return Err(e);
                    }
                };
                let (mut v, next) = split(page);
                items.append(&mut v);
                match next {
                    None => return Ok(items),
                    Some(c) => {
                        if !seen.insert(c.clone()) {
                            return Err(ClientError::CursorLoop {
                                method: method.to_owned(),
                                cursor: c,
                            });
                        }
                        cursor = Some(c);
                    }
                }
            }
        }
    }

    /// One page of `tools/list`.
    pub async fn list_tools_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListToolsResult, ClientError> {
        self.page(methods::TOOLS_LIST, cursor).await
    }

    /// Every tool, following pagination cursors.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.collect(methods::TOOLS_LIST, |p: ListToolsResult| {
            (p.tools, p.next_cursor)
        })
        .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.page(methods::PROMPTS_LIST, cursor).await
    }

    /// Every prompt, following pagination cursors.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.collect(methods::PROMPTS_LIST, |p: ListPromptsResult| {
            (p.prompts, p.next_cursor)
        })
        .await
    }

    /// One page of `resources/list`.
    pub async fn list_resources_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.page(methods::RESOURCES_LIST, cursor).await
    }

    /// Every resource, following pagination cursors.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.collect(methods::RESOURCES_LIST, |p: ListResourcesResult| {
            (p.resources, p.next_cursor)
        })
        .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.page(methods::RESOURCES_TEMPLATES_LIST, cursor).await
    }

    /// Every resource template, following pagination cursors.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.collect(
            methods::RESOURCES_TEMPLATES_LIST,
            |p: ListResourceTemplatesResult| (p.resource_templates, p.next_cursor),
        )
        .await
    }
}
