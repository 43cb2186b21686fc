//! The extension's methods (`skills/list`, `skills/get`,
//! `resources/directory/read`) and the skill files as resources.

use std::sync::Arc;
use tessera_types::methods;

use tessera_types::{
    BlobResourceContents, ErrorObject, GetSkillRequest, GetSkillRequestParams, GetSkillResult,
    ListSkillsRequest, ListSkillsResult, PaginatedRequestParams, ReadResourceDirectoryRequest,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceResult, Resource,
    ResourceContents, TextResourceContents,
};

use super::Shared;
use crate::context::RequestContext;
use crate::extension::{ExtensionRequest, ExtensionRoutes};
use crate::resource::response::{echoed_uri, uri_data};
use crate::resource::{ResourceError, ResourceProvider};

/// Adds the extension's three requests to `routes`.
pub(crate) fn route(shared: &Arc<Shared>, routes: &mut ExtensionRoutes) {
    let s = shared.clone();
    routes.request::<ListSkillsRequest, _, _>(move |request, params| {
        std::future::ready(list(&s, &request, params))
    });
    let s = shared.clone();
    routes.request::<GetSkillRequest, _, _>(move |request, params| {
        std::future::ready(get(&s, &request, params))
    });
    let s = shared.clone();
    routes.request::<ReadResourceDirectoryRequest, _, _>(move |request, params| {
        let s = s.clone();
        async move { directory(&s, &request, params).await }
    });
}

fn list(
    shared: &Shared,
    request: &ExtensionRequest,
    params: PaginatedRequestParams,
) -> Result<ListSkillsResult, ErrorObject> {
    let all = shared.entries();
    // Entries are atomic: a page holds whole entries.
    let (page, next) = request.page(methods::SKILLS_LIST, &all, params.cursor.as_deref())?;
    let mut result = ListSkillsResult::new(page, next);
    request.cache_hints(&mut result);
    Ok(result)
}

fn get(
    shared: &Shared,
    request: &ExtensionRequest,
    params: GetSkillRequestParams,
) -> Result<GetSkillResult, ErrorObject> {
    let uri = params.uri;
    let skill = {
        let catalog = shared.catalog();
        catalog.by_uri.get(&uri).map(|i| catalog.skills[*i].clone())
    }
    .or_else(|| {
        shared
            .dynamic()
            .iter()
            .find(|d| d.uri == uri)
            .map(|d| d.entry())
    });
    let Some(skill) = skill else {
        return Err(ErrorObject::invalid_params(format!(
            "No skill is served at {}",
            echoed_uri(&uri)
        ))
        .with_data(uri_data(&uri)));
    };
    let mut result = GetSkillResult::new(skill);
    request.cache_hints(&mut result);
    Ok(result)
}

async fn directory(
    shared: &Shared,
    request: &ExtensionRequest,
    params: ReadResourceDirectoryRequestParams,
) -> Result<ReadResourceDirectoryResult, ErrorObject> {
    let uri = params.uri;
    let not_a_directory = || {
        ErrorObject::invalid_params(format!("{} is not a directory resource", echoed_uri(&uri)))
            .with_data(uri_data(&uri))
    };
    let children: Vec<Resource> = match shared.catalog().dirs.get(&uri) {
        Some(c) => c.clone(),
        None => {
            let owner = shared.dynamic().into_iter().find(|d| d.owns(&uri));
            let Some(owner) = owner else {
                return Err(not_a_directory());
            };
            owner
                .directory(&uri)
                .await
                .map_err(|e| e.into_error_object(Some(&uri), request.context().era()))?
                .ok_or_else(not_a_directory)?
        }
    };
    // The cursor is bound to this directory.
    let (page, next) = request.page(
        &format!("resources/directory/read {uri}"),
        &children,
        params.cursor.as_deref(),
    )?;
    let mut result = ReadResourceDirectoryResult::new(page, next);
    // Like every listing of 2026-07-28, a directory page is cacheable:
    // peers (the TypeScript SkillsClient) require `ttlMs`/`cacheScope`.
    request.cache_hints(&mut result);
    Ok(result)
}

/// The skill files as resources: every `SKILL.md` listed, every file read.
pub(crate) struct SkillFiles(pub Arc<Shared>);

/// Reads a file of a skill directory, confined to the skill's root: a link
/// swapped in since the load is refused, not followed.
async fn read_file(
    uri: &str,
    file: super::catalog::FileEntry,
) -> Result<ReadResourceResult, ResourceError> {
    let (root, rel) = (file.root.clone(), file.rel.clone());
    let bytes = tokio::task::spawn_blocking(move || {
        super::confined::read(&root, &rel, tessera_types::MAX_SKILL_BYTES)
    })
    .await
    .map_err(ResourceError::internal)?
    .map_err(|e| {
        tracing::warn!("skill file {uri} not served: {e}");
        ResourceError::NotFound
    })?;
    Ok(contents(uri, file.mime_type, bytes))
}

fn contents(uri: &str, mime: String, bytes: Vec<u8>) -> ReadResourceResult {
    let part = match String::from_utf8(bytes) {
        Ok(text) => {
            ResourceContents::Text(TextResourceContents::new(uri, text).with_mime_type(mime))
        }
        Err(e) => {
            let mut b = BlobResourceContents::from_bytes(uri, e.as_bytes());
            b.mime_type = Some(mime);
            ResourceContents::Blob(b)
        }
    };
    ReadResourceResult::new(vec![part])
}

impl ResourceProvider for SkillFiles {
    async fn list(&self) -> Result<Vec<Resource>, ResourceError> {
        let mut listed = self.0.catalog().listed.clone();
        listed.extend(self.0.dynamic().iter().map(|d| d.listed()));
        listed.sort_by(|a, b| a.uri.cmp(&b.uri));
        Ok(listed)
    }

    async fn read(
        &self,
        uri: &str,
        _context: &RequestContext,
    ) -> Option<Result<ReadResourceResult, ResourceError>> {
        let file = self.0.catalog().files.get(uri).cloned();
        if let Some(file) = file {
            return Some(read_file(uri, file).await);
        }
        let owner = self.0.dynamic().into_iter().find(|d| d.owns(uri))?;
        Some(match owner.read(uri).await {
            Ok(Some((bytes, mime))) => Ok(contents(uri, mime, bytes)),
            Ok(None) => Err(ResourceError::NotFound),
            Err(e) => Err(e),
        })
    }
}
