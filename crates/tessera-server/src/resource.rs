//! Resources and resource templates: definitions, handlers, providers, and
//! the `resources/*` methods.
//!
//! A fixed resource is registered with [`resource`], a family of resources
//! with an RFC 6570 [`resource_template`], and many resources at once with a
//! [`ResourceProvider`] such as [`FsResources`]. Handlers are async
//! functions whose parameters are extractors ([`Uri`], [`Vars<T>`],
//! [`UriVars`], [`State<S>`](crate::State), [`RequestContext`], …) and whose
//! output converts into contents ([`IntoResourceContents`]).
//!
//! `resources/read` looks for the URI among the registered resources (exact
//! match), then asks the providers, then tries the templates in
//! registration order; the first that matches answers. When nothing does,
//! the answer is "resource not found": `-32002` up to 2025-11-25, `-32602`
//! in 2026-07-28, both with `data: {"uri": …}`.

mod builder;
mod extract;
mod fs;
mod handler;
mod provider;
pub(crate) mod response;
mod template;
pub(crate) mod uri;
mod vars;

use std::collections::HashMap;
use std::sync::Arc;
use tessera_types::methods;

use tessera_runtime::ReplyResult;
use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::{
    Era, ErrorObject, JsonObject, ReadResourceRequestParams, Resource, ResourceRequestParams,
    ResourceTemplate, ResourcesCapability, ServerCapabilities,
};

pub use builder::{
    ResourceBuilder, ResourceRoute, ResourceTemplateBuilder, ResourceTemplateRoute, resource,
    resource_template,
};
pub use extract::{ResourceRead, Uri, UriVars, Vars};
pub use fs::{FsResources, guess_mime_type};
pub use handler::ResourceHandler;
pub use provider::{ResourceProvider, SharedProvider};
pub use response::{Blob, IntoResourceContents, JsonContents, MAX_ECHOED_URI, ResourceError};
pub use template::{MAX_MATCH_LEN, TemplateError, UriTemplate, VarValue};

use builder::ErasedReader;
use uri::check_uri;

use crate::context::RequestContext;
use crate::error::BuildError;
use crate::extract::{HandlerInput, RequestParts};
use crate::hub::ListKind;
use crate::server::{Server, ServerBuilder, done};
use tessera_types::Cacheable as _;

/// A build error about a resource. `BuildError` has no resource variants
/// yet, so this borrows the free-form `InvalidSchema` one.
fn resource_error(subject: &str, problem: impl std::fmt::Display) -> BuildError {
    BuildError::InvalidResource {
        uri: subject.to_owned(),
        problem: problem.to_string(),
    }
}

struct RegisteredResource<S> {
    resource: Resource,
    handler: ErasedReader<S>,
}

struct RegisteredTemplate<S> {
    template: ResourceTemplate,
    parsed: UriTemplate,
    handler: ErasedReader<S>,
}

struct RegisteredProvider {
    provider: Arc<dyn provider::HeldProvider>,
    templates: Vec<(ResourceTemplate, Option<UriTemplate>)>,
}

/// The resources, templates and providers of a server, in registration
/// order (a deterministic order for listing and pagination).
pub(crate) struct ResourceRegistry<S> {
    resources: Vec<Arc<RegisteredResource<S>>>,
    index: HashMap<String, usize>,
    templates: Vec<Arc<RegisteredTemplate<S>>>,
    providers: Vec<Arc<RegisteredProvider>>,
    enabled: bool,
}

impl<S> Default for ResourceRegistry<S> {
    fn default() -> Self {
        ResourceRegistry {
            resources: Vec::new(),
            index: HashMap::new(),
            templates: Vec::new(),
            providers: Vec::new(),
            enabled: false,
        }
    }
}

/// What answers a `resources/read`, found under the registry lock.
enum Source<S> {
    Fixed(Arc<RegisteredResource<S>>),
    Chain(
        Vec<Arc<RegisteredProvider>>,
        Vec<Arc<RegisteredTemplate<S>>>,
    ),
}

impl<S> ResourceRegistry<S> {
    pub fn finish(&mut self) -> Result<(), BuildError> {
        Ok(())
    }

    fn offered(&self) -> bool {
        self.enabled
            || !self.resources.is_empty()
            || !self.templates.is_empty()
            || !self.providers.is_empty()
    }

    pub fn declare(&self, caps: &mut ServerCapabilities) {
        if self.offered() {
            caps.resources = Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            });
        }
    }

    pub fn methods(&self) -> Vec<&'static str> {
        if self.offered() {
            vec![
                methods::RESOURCES_LIST,
                methods::RESOURCES_READ,
                methods::RESOURCES_TEMPLATES_LIST,
                methods::RESOURCES_SUBSCRIBE,
                methods::RESOURCES_UNSUBSCRIBE,
            ]
        } else {
            Vec::new()
        }
    }

    /// Declares the `resources` capability even while nothing is registered
    /// (for servers that add resources at run time).
    pub fn enable(&mut self) {
        self.enabled = true;
    }

    pub fn add(&mut self, route: ResourceRoute<S>) -> Result<(), BuildError> {
        let uri = &route.resource.uri;
        check_uri(uri).map_err(|p| resource_error(uri, format!("invalid URI {uri:?}: {p}")))?;
        if route.resource.name.is_empty() {
            return Err(resource_error(uri, "the resource name must not be empty"));
        }
        if self.index.contains_key(uri) {
            return Err(resource_error(
                uri,
                format!("two resources have the URI {uri:?}; URIs must be unique"),
            ));
        }
        self.index.insert(uri.clone(), self.resources.len());
        self.resources.push(Arc::new(RegisteredResource {
            resource: route.resource,
            handler: route.handler,
        }));
        Ok(())
    }

    pub fn remove(&mut self, uri: &str) -> bool {
        let Some(i) = self.index.remove(uri) else {
            return false;
        };
        self.resources.remove(i);
        for (n, r) in self.resources.iter().enumerate().skip(i) {
            self.index.insert(r.resource.uri.clone(), n);
        }
        true
    }

    pub fn add_template(&mut self, route: ResourceTemplateRoute<S>) -> Result<(), BuildError> {
        let source = &route.template.uri_template;
        let parsed = UriTemplate::parse(source).map_err(|e| resource_error(source, e))?;
        if route.template.name.is_empty() {
            return Err(resource_error(
                source,
                "the template name must not be empty",
            ));
        }
        if self
            .templates
            .iter()
            .any(|t| t.template.uri_template == *source)
        {
            return Err(resource_error(
                source,
                format!("two resource templates are {source:?}; templates must be unique"),
            ));
        }
        self.templates.push(Arc::new(RegisteredTemplate {
            template: route.template,
            parsed,
            handler: route.handler,
        }));
        Ok(())
    }

    pub fn remove_template(&mut self, uri_template: &str) -> bool {
        let before = self.templates.len();
        self.templates
            .retain(|t| t.template.uri_template != uri_template);
        self.templates.len() != before
    }

    pub fn add_provider(&mut self, provider: SharedProvider) {
        let provider = provider.0;
        let templates = provider
            .templates()
            .into_iter()
            .map(|t| {
                let parsed = UriTemplate::parse(&t.uri_template).ok();
                (t, parsed)
            })
            .collect();
        self.providers.push(Arc::new(RegisteredProvider {
            provider,
            templates,
        }));
    }

    /// Whether any resource template is registered (the providers' included).
    pub fn has_templates(&self) -> bool {
        !self.templates.is_empty() || self.providers.iter().any(|p| !p.templates.is_empty())
    }

    /// Whether `template` is a registered URI template (exactly as written)
    /// with a variable called `var`. Used by argument completion.
    pub fn has_template_variable(&self, template: &str, var: &str) -> bool {
        self.templates
            .iter()
            .filter(|t| t.template.uri_template == template)
            .any(|t| t.parsed.has_variable(var))
            || self
                .providers
                .iter()
                .flat_map(|p| p.templates.iter())
                .filter(|(t, _)| t.uri_template == template)
                .any(|(_, parsed)| parsed.as_ref().is_some_and(|p| p.has_variable(var)))
    }

    /// The registered resources' definitions (providers' not included).
    pub fn definitions(&self) -> Vec<Resource> {
        self.resources.iter().map(|r| r.resource.clone()).collect()
    }

    /// Every template definition: registered ones, then the providers'.
    pub fn template_definitions(&self) -> Vec<ResourceTemplate> {
        self.templates
            .iter()
            .map(|t| t.template.clone())
            .chain(
                self.providers
                    .iter()
                    .flat_map(|p| p.templates.iter().map(|(t, _)| t.clone())),
            )
            .collect()
    }

    fn source(&self, uri: &str) -> Source<S> {
        match self.index.get(uri) {
            Some(i) => Source::Fixed(self.resources[*i].clone()),
            None => Source::Chain(self.providers.clone(), self.templates.clone()),
        }
    }
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Registers a resource (see [`resource`](crate::resource())).
    pub fn resource(mut self, route: ResourceRoute<S>) -> Self {
        if let Err(e) = self.registry.resources.add(route) {
            self.errors.push(e);
        }
        self
    }

    /// Registers a resource template (see
    /// [`resource_template`](crate::resource_template())); an invalid RFC
    /// 6570 template fails the build.
    pub fn resource_template(mut self, route: ResourceTemplateRoute<S>) -> Self {
        if let Err(e) = self.registry.resources.add_template(route) {
            self.errors.push(e);
        }
        self
    }

    /// Registers a source of many resources, such as [`FsResources`].
    pub fn resources_from(mut self, provider: impl ResourceProvider) -> Self {
        self.registry
            .resources
            .add_provider(SharedProvider::new(provider));
        self
    }

    /// Declares the `resources` capability even if nothing is registered
    /// yet, for servers that add resources while serving (capabilities are
    /// fixed when a connection starts).
    pub fn enable_resources(mut self) -> Self {
        self.registry.resources.enable();
        self
    }
}

fn reader_input<S>(
    uri: &str,
    template: Option<&String>,
    variables: HashMap<String, VarValue>,
    mime_type: &Option<String>,
    context: &RequestContext,
    server: &Server<S>,
) -> HandlerInput<S, ResourceRead> {
    HandlerInput {
        parts: RequestParts::new(server, context.clone()),
        body: ResourceRead {
            uri: uri.to_owned(),
            template: template.cloned(),
            variables,
            mime_type: mime_type.clone(),
        },
    }
}

fn invalid_uri(uri: &str, problem: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Invalid params: invalid resource URI: {problem}"))
        .with_data(response::uri_data(uri))
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Adds a resource while serving; clients that asked are told the list
    /// changed. The `resources` capability must have been declared when the
    /// connection started (register something at build time, or call
    /// [`ServerBuilder::enable_resources`]).
    pub fn add_resource(&self, route: ResourceRoute<S>) -> Result<(), BuildError> {
        self.write().resources.add(route)?;
        self.hub().list_changed(ListKind::Resources);
        Ok(())
    }

    /// Removes a resource while serving; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.write().resources.remove(uri);
        if removed {
            self.hub().list_changed(ListKind::Resources);
        }
        removed
    }

    /// Adds a resource template while serving; clients that asked are told
    /// the resource list changed.
    pub fn add_resource_template(&self, route: ResourceTemplateRoute<S>) -> Result<(), BuildError> {
        self.write().resources.add_template(route)?;
        self.hub().list_changed(ListKind::Resources);
        Ok(())
    }

    /// Removes the resource template `uri_template` (as written) while
    /// serving; returns whether it existed.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        let removed = self.write().resources.remove_template(uri_template);
        if removed {
            self.hub().list_changed(ListKind::Resources);
        }
        removed
    }

    /// Adds the cache hints a complete result does not set already (a
    /// handler's own `ttlMs` or `cacheScope` stays).
    fn keep_or_hint(&self, ctx: &RequestContext, result: &mut tessera_types::ReadResourceResult) {
        if result
            .result_type
            .as_ref()
            .is_some_and(|t| *t != tessera_types::ResultType::Complete)
        {
            return;
        }
        if let Some((ms, scope)) = self.cache_hint(ctx) {
            let (ttl, sc) = result.cache_fields_mut();
            ttl.get_or_insert(ms);
            sc.get_or_insert(scope);
        }
    }

    pub(crate) fn list_resources(&self, r: Request) -> BoxFuture<'static, ReplyResult> {
        let ctx = RequestContext::from_request(&r);
        let cursor = match crate::pagination::cursor_of(r.params.as_ref()) {
            Ok(c) => c,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let (mut all, providers) = {
            let reg = self.read();
            (reg.resources.definitions(), reg.resources.providers.clone())
        };
        let server = self.clone();
        let shape = r.context.result_shape.clone();
        Box::pin(async move {
            for p in providers {
                let listed = p
                    .provider
                    .list_boxed()
                    .await
                    .map_err(|e| e.into_error_object(None, ctx.era()))?;
                all.extend(listed);
            }
            let (resources, next_cursor) =
                server
                    .pager()
                    .page(methods::RESOURCES_LIST, &all, cursor.as_deref())?;
            let mut result = tessera_types::ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            };
            server.hint(&ctx, &mut result);
            crate::extension::routes::write_result(&result, shape.as_ref())
        })
    }

    pub(crate) fn list_resource_templates(&self, r: &Request) -> ReplyResult {
        let ctx = RequestContext::from_request(r);
        let cursor = crate::pagination::cursor_of(r.params.as_ref())?;
        let all = self.read().resources.template_definitions();
        let (resource_templates, next_cursor) =
            self.pager()
                .page(methods::RESOURCES_TEMPLATES_LIST, &all, cursor.as_deref())?;
        let mut result = tessera_types::ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
            ..Default::default()
        };
        self.hint(&ctx, &mut result);
        crate::extension::routes::write_result(&result, r.context.result_shape.as_ref())
    }

    pub(crate) fn read_resource(&self, r: Request) -> BoxFuture<'static, ReplyResult> {
        let params: ReadResourceRequestParams = match tessera_types::decode_params(
            crate::mrtr::without_round_fields(r.params.as_ref()).as_ref(),
        ) {
            Ok(p) => p,
            Err(e) => {
                return done(Err(ErrorObject::invalid_params(format!(
                    "Invalid params for resources/read: {e}"
                ))));
            }
        };
        let uri = params.uri;
        if let Err(problem) = check_uri(&uri) {
            return done(Err(invalid_uri(&uri, problem)));
        }
        // 2026-07-28: the answers a retry brings (a handler may ask the client
        // for input; bad sealed state is refused before any handler runs).
        let input = match self.prepare_input(&r) {
            Ok(i) => i,
            Err(e) => return done(Err(e)),
        };
        let mut ctx = RequestContext::from_request(&r);
        ctx.input = Some(input.clone());
        let era = ctx.era();
        let source = self.read().resources.source(&uri);
        let server = self.clone();
        let principal = crate::mrtr::principal(&r);
        let shape = r.context.result_shape.clone();
        Box::pin(async move {
            let run = async {
                let outcome = match source {
                    Source::Fixed(res) => {
                        let input = reader_input(
                            &uri,
                            None,
                            HashMap::new(),
                            &res.resource.mime_type,
                            &ctx,
                            &server,
                        );
                        (res.handler)(input).await
                    }
                    Source::Chain(providers, templates) => {
                        let mut claimed = None;
                        for p in providers.iter() {
                            claimed = p.provider.read_boxed(&uri, &ctx).await;
                            if claimed.is_some() {
                                break;
                            }
                        }
                        match claimed {
                            Some(read) => read,
                            None => {
                                let matched = templates
                                    .iter()
                                    .find_map(|t| t.parsed.match_uri(&uri).map(|v| (t, v)));
                                match matched {
                                    Some((t, vars)) => {
                                        let input = reader_input(
                                            &uri,
                                            Some(&t.template.uri_template),
                                            vars,
                                            &t.template.mime_type,
                                            &ctx,
                                            &server,
                                        );
                                        (t.handler)(input).await
                                    }
                                    None => Err(ResourceError::NotFound),
                                }
                            }
                        }
                    }
                };
                let mut result = outcome.map_err(|e| e.into_error_object(Some(&uri), era))?;
                match era {
                    Era::Modern => server.keep_or_hint(&ctx, &mut result),
                    Era::Legacy => {
                        result.result_type = None;
                        result.clear_cache_hint();
                    }
                }
                Ok(crate::server::typed_reply(&result, shape.as_ref()))
            };
            // A handler that asks the client for input is answered with an
            // InputRequiredResult in 2026-07-28 (without cache hints).
            server
                .run_with_input(&r.method, r.params.as_ref(), principal, input, run)
                .await
        })
    }

    /// `resources/subscribe` and `resources/unsubscribe` (legacy sessions;
    /// 2026-07-28 clients use `subscriptions/listen`).
    pub(crate) fn resource_subscription(&self, r: &Request, subscribe: bool) -> HandlerResult {
        if r.context.era == Era::Modern {
            return Err(ErrorObject::method_not_found(&r.method));
        }
        let params: ResourceRequestParams = tessera_types::decode_params(
            crate::mrtr::without_round_fields(r.params.as_ref()).as_ref(),
        )
        .map_err(|e| {
            ErrorObject::invalid_params(format!("Invalid params for {}: {e}", r.method))
        })?;
        check_uri(&params.uri).map_err(|p| invalid_uri(&params.uri, p))?;
        if subscribe {
            self.hub().subscribe(&r.peer, &params.uri);
        } else {
            self.hub().unsubscribe(&r.peer, &params.uri);
        }
        // The session's stored state carries its subscriptions.
        r.peer.session_changed();
        Ok(JsonObject::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn hello() -> &'static str {
        "hello"
    }

    #[test]
    fn registry_checks_and_queries() {
        let mut reg: ResourceRegistry<()> = ResourceRegistry::default();
        let mut caps = ServerCapabilities::default();
        reg.declare(&mut caps);
        assert!(caps.resources.is_none());
        assert!(reg.methods().is_empty());

        reg.add(resource("x://a", "a").handler(hello)).unwrap();
        assert!(reg.add(resource("x://a", "again").handler(hello)).is_err());
        assert!(
            reg.add(resource("not a uri", "bad").handler(hello))
                .is_err()
        );
        assert!(reg.add(resource("x://b", "").handler(hello)).is_err());
        reg.add_template(resource_template("x://items/{id}{?v}", "item").handler(hello))
            .unwrap();
        assert!(
            reg.add_template(resource_template("x://items/{id}{?v}", "dup").handler(hello))
                .is_err()
        );
        assert!(
            reg.add_template(resource_template("x://{bad", "bad").handler(hello))
                .is_err()
        );
        assert!(reg.has_templates());
        assert!(reg.has_template_variable("x://items/{id}{?v}", "id"));
        assert!(reg.has_template_variable("x://items/{id}{?v}", "v"));
        assert!(!reg.has_template_variable("x://items/{id}{?v}", "w"));
        assert!(!reg.has_template_variable("x://other/{id}", "id"));

        reg.declare(&mut caps);
        assert_eq!(
            caps.resources,
            Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            })
        );
        assert_eq!(reg.methods().len(), 5);

        reg.add(resource("x://c", "c").handler(hello)).unwrap();
        assert!(reg.remove("x://a"));
        assert!(!reg.remove("x://a"));
        let uris: Vec<String> = reg.definitions().into_iter().map(|r| r.uri).collect();
        assert_eq!(uris, ["x://c"]);
        assert!(matches!(reg.source("x://c"), Source::Fixed(_)));
        assert!(reg.remove_template("x://items/{id}{?v}"));
        assert!(!reg.has_templates());
    }

    #[test]
    fn enabled_without_anything() {
        let mut reg: ResourceRegistry<()> = ResourceRegistry::default();
        reg.enable();
        let mut caps = ServerCapabilities::default();
        reg.declare(&mut caps);
        assert!(caps.resources.is_some());
    }
}
