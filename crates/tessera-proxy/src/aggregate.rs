//! [`Aggregator`]: several upstream servers behind one endpoint.
//!
//! Names are prefixed with the upstream's name: tools and prompts become
//! `NAME__tool`, resource URIs `NAME+scheme:…` (a valid URI scheme, since a
//! name is a letter followed by letters, digits and `-`); the only upstream
//! may be shown under its own names instead ([`crate::Naming`]). Each upstream has
//! one pooled connection, watched by a supervisor task: when it dies its
//! tools, prompts and resources disappear (clients are told the lists
//! changed), and it is reconnected with backoff until it comes back.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};
use tessera_types::methods;

use serde_json::Value;
use tessera_http::ServiceFactory;
use tessera_proto::{EngineConfig, ServerIdentity};
use tessera_runtime::{HandlerResult, Peer, Request, Service};
use tessera_types::{
    Era, ErrorObject, Implementation, JsonObject, PaginatedRequestParams, PromptsCapability,
    ProtocolVersion, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use tokio_util::sync::CancellationToken;

use crate::bridge::FORWARDED_METHODS;
use crate::caller::Visible;
use crate::config::{UpstreamConfig, check_prefixes, valid_name};
use crate::error::ProxyError;
use crate::hints::Hints;
use crate::hub::Hub;
use crate::member::{Member, supervise};
use crate::naming::{NAME_SEPARATOR, Naming, URI_SEPARATOR};
use crate::pages::{DEFAULT_PAGE_SIZE, Position, requested_cursor};
use crate::policy::{ItemKind, Policy};
use crate::ratelimit::RateLimits;
use crate::shapes::{
    Addressed, Content, Linking, ListKind, ListPage, ListedItem, Loose, ReadHints, read, take,
    write,
};
use crate::upstream::UpstreamOptions;

mod sessions;
mod subscriptions;
mod upstreams;

pub use upstreams::Reconfigured;

/// The most upstream pages read to serve one page of a combined list.
const MAX_PAGES: usize = 100;

struct Inner {
    /// The upstreams, in order; replaced whole when one is added or removed
    /// ([`Aggregator::add_upstream`]), so a request works on the list it
    /// started with.
    members: RwLock<Arc<Vec<Arc<Member>>>>,
    /// The options new upstreams are connected with.
    options: UpstreamOptions,
    /// Who may see and use what ([`Aggregator::set_policy`]).
    policy: RwLock<Arc<Policy>>,
    /// How often each caller may use each upstream ([`Aggregator::set_rate_limits`]).
    limits: RwLock<Arc<RateLimits>>,
    /// Items per page of the combined lists.
    page_size: AtomicUsize,
    hub: Arc<Hub>,
    /// The engine configuration new sessions get (its instructions name
    /// the upstreams, or are the only unprefixed upstream's), and the
    /// [`Hub::told`] count it was made at.
    config: RwLock<(u64, Arc<EngineConfig>)>,
    stop: CancellationToken,
    /// Tells the watcher of the legacy sessions of one more
    /// ([`sessions::watch`]).
    watch: tokio::sync::mpsc::UnboundedSender<Peer>,
    /// Itself, for the work it leaves to the background.
    me: Weak<Inner>,
}

/// Several upstream servers behind one endpoint (a
/// [`tessera_http::ServiceFactory`], like [`crate::Proxy`]).
///
/// ```no_run
/// use tessera_proxy::{Aggregator, UpstreamOptions, parse_servers};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let servers = parse_servers(r#"{"mcpServers": {
///     "local": {"command": "tessera", "args": ["serve", "--stdio"]},
///     "remote": {"url": "http://127.0.0.1:8001/mcp"}
/// }}"#)?;
/// let aggregator = Aggregator::start(servers, UpstreamOptions::default())?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8003").await?;
/// let mcp = tessera_http::McpHttp::builder(aggregator.clone())
///     .bind_address(listener.local_addr()?)
///     .build();
/// tessera_http::serve(listener, mcp, async { let _ = tokio::signal::ctrl_c().await; }).await?;
/// aggregator.close();
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Aggregator {
    inner: Arc<Inner>,
    service: Arc<AggregatorService>,
}

impl std::fmt::Debug for Aggregator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aggregator")
            .field("upstreams", &self.names())
            .finish_non_exhaustive()
    }
}

/// The engine configuration of an aggregator of the upstreams named by
/// `namings`; `sole` is what the only upstream, shown unprefixed, gave as
/// its instructions (passed on as they are: its names are the ones clients
/// see).
fn engine_config(namings: &[&Naming], sole: Option<String>) -> Arc<EngineConfig> {
    let info = Implementation::new("tessera-proxy", env!("CARGO_PKG_VERSION"));
    let capabilities = ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        prompts: Some(PromptsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
            ..Default::default()
        }),
        completions: Some(JsonObject::new()),
        logging: Some(JsonObject::new()),
        ..Default::default()
    };
    let identity = ServerIdentity {
        info,
        capabilities,
        instructions: Some(match (namings, sole) {
            ([only], Some(own)) if !only.is_prefixed() => own,
            ([only], None) if !only.is_prefixed() => format!(
                "This endpoint fronts the MCP server {}; its tools, prompts and resources keep \
                 their own names and URIs.",
                only.upstream()
            ),
            _ => format!(
                "This endpoint aggregates the MCP servers {}. Tool and prompt names are \
                 prefixed with the server name and '__'; resource URIs with the server name \
                 and '+'.",
                namings
                    .iter()
                    .map(|n| n.upstream())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
        ..ServerIdentity::default()
    };
    Arc::new(EngineConfig::server(identity).with_methods(FORWARDED_METHODS.iter().copied()))
}

/// Checks a whole list of upstreams: each name valid and given once, at
/// least one upstream, and one shown without prefix only when alone.
fn check_servers(servers: &[UpstreamConfig]) -> Result<(), ProxyError> {
    let mut seen = BTreeSet::new();
    for s in servers {
        check_name(&s.name)?;
        if !seen.insert(s.name.as_str()) {
            return Err(ProxyError::Config(format!(
                "upstream name {:?} given twice",
                s.name
            )));
        }
    }
    if servers.is_empty() {
        return Err(ProxyError::Config("no upstream server".into()));
    }
    check_prefixes(servers)
}

fn check_name(name: &str) -> Result<(), ProxyError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(ProxyError::Config(format!(
            "upstream name {name:?}: a letter, then letters, digits and '-'"
        )))
    }
}

impl Aggregator {
    /// Starts a supervisor per upstream (each connects, and reconnects with
    /// backoff whenever its connection ends) and returns at once; use
    /// [`Aggregator::wait_connected`] to wait for the first connections.
    pub fn start(
        servers: Vec<UpstreamConfig>,
        options: UpstreamOptions,
    ) -> Result<Aggregator, ProxyError> {
        check_servers(&servers)?;
        let hub = Arc::new(Hub::default());
        let stop = CancellationToken::new();
        let members: Vec<Arc<Member>> = servers
            .into_iter()
            .map(|entry| Arc::new(Member::new(entry, &options, stop.child_token(), &hub)))
            .collect();
        let namings: Vec<&Naming> = members.iter().map(|m| &m.naming).collect();
        let config = engine_config(&namings, None);
        for m in &members {
            tokio::spawn(supervise(m.clone(), hub.clone()));
        }
        let (watch, started) = tokio::sync::mpsc::unbounded_channel();
        let inner = Arc::new_cyclic(|me| Inner {
            members: RwLock::new(Arc::new(members)),
            options,
            policy: Default::default(),
            limits: Default::default(),
            page_size: AtomicUsize::new(DEFAULT_PAGE_SIZE),
            hub,
            config: RwLock::new((0, config)),
            stop,
            watch,
            me: me.clone(),
        });
        tokio::spawn(sessions::watch(
            Arc::downgrade(&inner),
            started,
            inner.stop.clone(),
        ));
        let service = Arc::new(AggregatorService {
            inner: inner.clone(),
        });
        Ok(Aggregator { inner, service })
    }

    /// Sets how many items a page of a combined list holds (at least 1;
    /// 100 by default). The lists are the upstreams' lists one after the
    /// other; each page ends with a `nextCursor` until the last.
    pub fn set_page_size(&self, items: usize) {
        self.inner.page_size.store(items.max(1), Ordering::Relaxed);
    }

    /// Sets the rules that decide who may see and use which tools, prompts
    /// and resources (see [`crate::Policy`]); requests already running keep
    /// the rules they started with.
    pub fn set_policy(&self, policy: Policy) {
        *self.inner.policy.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(policy);
    }

    /// Sets the rate limits per caller × upstream (see
    /// [`crate::RateLimits`]); the buckets start full.
    pub fn set_rate_limits(&self, limits: RateLimits) {
        *self.inner.limits.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(limits);
    }

    /// The upstream names, in order.
    pub fn names(&self) -> Vec<String> {
        self.inner
            .members()
            .iter()
            .map(|m| m.entry.name.clone())
            .collect()
    }

    /// Each upstream's state: `connected`, `reconnecting`, `circuit-open`
    /// (its circuit breaker refuses requests) or `circuit-half-open` (a
    /// probe request decides); ready when at least one is connected (the
    /// others' items are left out until they come back).
    pub fn readiness(&self) -> crate::Readiness {
        let mut upstreams = serde_json::Map::new();
        let mut ready = false;
        for m in self.inner.members().iter() {
            let state = m.state();
            ready |= state == "connected" || state == "per-caller";
            upstreams.insert(m.entry.name.clone(), Value::from(state));
        }
        crate::Readiness { ready, upstreams }
    }

    /// Whether upstream `name` is connected now (an upstream reached on
    /// one connection per caller always is: each caller connects on use).
    pub fn is_connected(&self, name: &str) -> bool {
        self.member(name)
            .is_some_and(|m| m.per_caller() || m.current().is_some())
    }

    /// Waits until upstream `name` is connected (`false` if there is no
    /// such upstream or the aggregator was closed).
    pub async fn wait_connected(&self, name: &str, connected: bool) -> bool {
        let Some(m) = self.member(name) else {
            return false;
        };
        let mut rx = m.alive.subscribe();
        tokio::select! {
            r = rx.wait_for(|a| *a == connected) => r.is_ok(),
            _ = m.stop.cancelled() => false,
        }
    }

    /// Waits until `n` lost connections of callers to upstream `name`
    /// (one reached per caller) have been made again with their
    /// subscriptions, counted since the start (`false` if there is no such
    /// upstream or the aggregator was closed).
    pub async fn wait_callers_restored(&self, name: &str, n: u64) -> bool {
        let Some(m) = self.member(name) else {
            return false;
        };
        let mut rx = m.restored.subscribe();
        tokio::select! {
            r = rx.wait_for(|k| *k >= n) => r.is_ok(),
            _ = m.stop.cancelled() => false,
        }
    }

    /// How many callers have a connection of their own to upstream `name`
    /// (one whose credentials depend on the caller; at most
    /// [`crate::MAX_CALLERS`], idle ones closed after
    /// [`crate::CALLER_IDLE`]).
    pub fn caller_connections(&self, name: &str) -> usize {
        self.member(name).map_or(0, |m| m.caller_connections())
    }

    /// How many legacy sessions and `subscriptions/listen` streams hold a
    /// subscription to the resource clients see as `uri` now (through any
    /// caller's connection).
    pub fn subscribers(&self, uri: &str) -> usize {
        self.inner.hub.subscribers(uri)
    }

    /// Waits until [`Aggregator::subscribers`] of `uri` is `n` (counted as
    /// soon as a subscription is asked for, before the upstream answers);
    /// `false` if the aggregator was closed first.
    pub async fn wait_subscribers(&self, uri: &str, n: usize) -> bool {
        tokio::select! {
            () = self.inner.hub.wait_subscribers(uri, n) => true,
            () = self.inner.stop.cancelled() => false,
        }
    }

    /// Waits until `n` requests about the subscription to `uri` (as
    /// clients see it) wait for their turn: those about one resource reach
    /// its upstream one after the other, each once the one before it was
    /// answered. `false` if the aggregator was closed first.
    pub async fn wait_queued(&self, uri: &str, n: usize) -> bool {
        tokio::select! {
            () = self.inner.hub.wait_queued(uri, n) => true,
            () = self.inner.stop.cancelled() => false,
        }
    }

    fn member(&self, name: &str) -> Option<Arc<Member>> {
        self.inner
            .members()
            .iter()
            .find(|m| m.entry.name == name)
            .cloned()
    }

    /// The engine configuration the aggregator serves with.
    pub fn engine_config(&self) -> EngineConfig {
        (*self.inner.config()).clone()
    }

    /// Stops the supervisors and closes every upstream connection.
    pub fn close(&self) {
        self.inner.stop.cancel();
    }
}

/// Shows the resource URIs in content as `naming` says: the URI of a
/// resource link or of an embedded resource.
fn prefix_content(naming: &Naming, content: &mut Loose<Content>) {
    let Loose::Valid(content) = content else {
        return;
    };
    for b in content.blocks_mut() {
        let uri = match b.kind.valid().map(String::as_str) {
            Some("resource_link") => b.uri.valid_mut(),
            Some("resource") => b.resource.valid_mut().and_then(|r| r.uri.valid_mut()),
            _ => None,
        };
        if let Some(u) = uri {
            *u = naming.uri(u);
        }
    }
}

/// Shows the resource URIs a `method` result links to as `naming` says
/// (prefixed, or left as they are).
fn prefix_result(naming: &Naming, method: &str, result: &mut Linking) {
    if !naming.is_prefixed() {
        return;
    }
    match method {
        methods::TOOLS_CALL => prefix_content(naming, &mut result.content),
        methods::PROMPTS_GET => {
            for m in result.messages.valid_mut().into_iter().flatten() {
                if let Loose::Valid(m) = m {
                    prefix_content(naming, &mut m.content);
                }
            }
        }
        methods::RESOURCES_READ => {
            for c in result.contents.valid_mut().into_iter().flatten() {
                if let Some(u) = c.valid_mut().and_then(|c| c.uri.valid_mut()) {
                    *u = naming.uri(u);
                }
            }
        }
        _ => {}
    }
}

/// The downstream side of an [`Aggregator`].
#[derive(Clone)]
pub struct AggregatorService {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AggregatorService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AggregatorService").finish_non_exhaustive()
    }
}

/// One page of an upstream's `kind` list (from its `cursor`), filtered by
/// the tool allow/deny lists and prefixed, with the upstream's next cursor
/// and its caching hints (`ttlMs`, `cacheScope`); `None` when the upstream
/// is down or the request failed.
async fn upstream_page(
    m: &Member,
    r: &Request,
    method: &str,
    kind: ListKind,
    cursor: Option<String>,
    visible: &Visible<'_>,
) -> Option<(Vec<ListedItem>, Option<String>, ReadHints)> {
    let params = match cursor {
        Some(c) => Some(write(&PaginatedRequestParams::after(c)).ok()?),
        None => None,
    };
    let mut page: ListPage = take(m.page(r, method, params).await?);
    let name = &m.entry.name;
    let items = page
        .take_items(kind)
        .into_iter()
        .filter_map(|mut item| {
            let original = item.name.valid()?.clone();
            if kind == ListKind::Tools && !m.entry.allows(&original) {
                return None;
            }
            // The name callers see (a tool may be renamed or hidden).
            let offered = if kind == ListKind::Tools {
                m.entry.overrides.offered(&original)?.to_owned()
            } else {
                original.clone()
            };
            let (item_kind, id) = match kind {
                ListKind::Tools => (ItemKind::Tool, original.as_str()),
                ListKind::Prompts => (ItemKind::Prompt, original.as_str()),
                _ => (
                    ItemKind::Resource,
                    item.uri.valid().or(item.uri_template.valid())?.as_str(),
                ),
            };
            if !visible.allows(name, item_kind, id) {
                return None;
            }
            if kind == ListKind::Tools {
                m.entry.overrides.present(&original, &mut item);
            }
            item.name = Loose::Valid(m.naming.name(&offered));
            for u in [&mut item.uri, &mut item.uri_template] {
                if let Loose::Valid(u) = u {
                    *u = m.naming.uri(u);
                }
            }
            Some(item)
        })
        .collect();
    let hints = page.hints();
    Some((items, page.next_cursor.into_valid(), hints))
}

/// The string `what`, or the error telling it must be one.
fn required_str<'a>(value: &'a Loose<String>, what: &str) -> Result<&'a str, ErrorObject> {
    value.valid().map(String::as_str).ok_or_else(|| {
        ErrorObject::invalid_params(format!("Invalid params: {what} must be a string"))
    })
}

impl Inner {
    /// The upstreams now.
    fn members(&self) -> Arc<Vec<Arc<Member>>> {
        self.members
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The engine configuration for new sessions, made again when the
    /// upstreams or the only upstream's instructions changed since.
    fn config(&self) -> Arc<EngineConfig> {
        let told = self.hub.told.load(Ordering::Acquire);
        {
            let held = self.config.read().unwrap_or_else(|e| e.into_inner());
            if held.0 == told {
                return held.1.clone();
            }
        }
        let members = self.members();
        let namings: Vec<&Naming> = members.iter().map(|m| &m.naming).collect();
        let sole = match members.as_slice() {
            [only] if !only.naming.is_prefixed() => only.instructions(),
            _ => None,
        };
        let config = engine_config(&namings, sole);
        let mut held = self.config.write().unwrap_or_else(|e| e.into_inner());
        if held.0 <= told {
            *held = (told, config.clone());
        }
        config
    }

    /// The upstream whose tool or prompt clients see as `name`, and its
    /// own name of it.
    fn by_name<'a>(&self, name: &'a str) -> Option<(Arc<Member>, &'a str)> {
        self.members()
            .iter()
            .find_map(|m| Some((m.clone(), m.naming.own_name(name)?)))
    }

    /// The upstream whose resource clients see as `uri`, and its own URI.
    fn by_uri<'a>(&self, uri: &'a str) -> Option<(Arc<Member>, &'a str)> {
        self.members()
            .iter()
            .find_map(|m| Some((m.clone(), m.naming.own_uri(uri)?)))
    }

    /// The upstream a subscription `topic` was made to, if it is still
    /// shown the way it was then, and its own URI.
    fn by_topic<'a>(&self, topic: &'a crate::hub::Topic) -> Option<(Arc<Member>, &'a str)> {
        self.members()
            .iter()
            .filter(|m| m.naming == topic.naming)
            .find_map(|m| Some((m.clone(), m.naming.own_uri(&topic.uri)?)))
    }

    /// How names are formed, for error messages.
    fn naming_help(&self) -> String {
        match self.members().as_slice() {
            [only] if !only.naming.is_prefixed() => format!(
                "names and URIs are those of the upstream {}",
                only.entry.name
            ),
            _ => format!(
                "names are NAME{NAME_SEPARATOR}ITEM, URIs NAME{URI_SEPARATOR}URI, with NAME one \
                 of the upstreams"
            ),
        }
    }

    /// One page of the combined `kind` list: the connected upstreams' items
    /// in configuration order, prefixed (see [`crate::pages`]). An upstream
    /// that is down or fails is left out, and the page goes on with the next.
    async fn list(&self, r: &Request, method: &str, kind: ListKind) -> HandlerResult {
        let size = self.page_size.load(Ordering::Relaxed).max(1);
        let members = self.members();
        let (mut index, mut cursor, mut skip) =
            match requested_cursor(r.params.as_ref().map(tessera_types::Params::object))? {
                None => (0, None, 0),
                Some(c) => {
                    let p = Position::open(method, &c)?;
                    let i = members
                        .iter()
                        .position(|m| m.entry.name == p.upstream)
                        .ok_or_else(|| {
                            ErrorObject::invalid_params(format!(
                                "Invalid params: invalid cursor for {method}"
                            ))
                        })?;
                    (i, p.cursor, p.skip)
                }
            };
        let visible = Visible::of(&self.policy, &self.limits, r);
        let mut items: Vec<ListedItem> = Vec::new();
        let mut hints = Hints::default();
        // Upstream pages read for this page, bounded so that upstreams
        // answering empty pages cannot keep one request going.
        let mut reads = 0;
        while index < members.len() && items.len() < size && reads < MAX_PAGES {
            let m = &members[index];
            reads += 1;
            let Some((page, next, page_hints)) =
                upstream_page(m, r, method, kind, cursor.clone(), &visible).await
            else {
                (index, cursor, skip) = (index + 1, None, 0);
                continue;
            };
            hints.add(&page_hints);
            let take = page.len().saturating_sub(skip).min(size - items.len());
            items.extend(page.iter().skip(skip).take(take).cloned());
            if skip + take < page.len() {
                skip += take;
                break;
            }
            match next {
                Some(c) => (cursor, skip) = (Some(c), 0),
                None => (index, cursor, skip) = (index + 1, None, 0),
            }
        }
        let mut out = ListPage::of(kind, items);
        if r.context.era == Era::Modern {
            let written = hints.written();
            out.ttl_ms = Loose::Valid(written.ttl_ms);
            out.cache_scope = Loose::Valid(written.cache_scope);
        }
        if let Some(m) = members.get(index) {
            let next = Position {
                method: method.to_owned(),
                upstream: m.entry.name.clone(),
                cursor,
                skip,
            };
            out.next_cursor = Loose::Valid(next.seal());
        }
        write(&out)
    }

    /// Forwards a request addressed by a prefixed name or URI.
    async fn routed(&self, r: &Request) -> HandlerResult {
        let method = r.method.as_str();
        let mut params: Addressed = r
            .params
            .as_ref()
            .map(|p| read(p.object()))
            .unwrap_or_default();
        let visible = Visible::of(&self.policy, &self.limits, r);
        // Unknown and denied read the same, so that a refusal tells nothing
        // of what the caller may not see.
        let help = self.naming_help();
        let unknown = |what: &str, v: &str| {
            ErrorObject::invalid_params(format!(
                "Invalid params: no {what} {v:?} is available to this caller ({help}; an item \
                 the gateway's rules deny is not available either)"
            ))
        };
        let kind_of = |what: &str| match what {
            "tool" => ItemKind::Tool,
            "prompt" => ItemKind::Prompt,
            _ => ItemKind::Resource,
        };
        let (member, kind, item) = match method {
            methods::TOOLS_CALL | methods::PROMPTS_GET => {
                let what = if method == methods::TOOLS_CALL {
                    "tool"
                } else {
                    "prompt"
                };
                let full = required_str(&params.name, "name")?.to_owned();
                let (m, rest) = self.by_name(&full).ok_or_else(|| unknown(what, &full))?;
                // A tool is called by the name callers see; the upstream's own.
                let rest = if what == "tool" {
                    m.entry
                        .overrides
                        .original(rest)
                        .ok_or_else(|| unknown(what, &full))?
                } else {
                    rest
                };
                if (what == "tool" && !m.entry.allows(rest))
                    || !visible.allows(&m.entry.name, kind_of(what), rest)
                {
                    return Err(unknown(what, &full));
                }
                params.name = Loose::Valid(rest.to_owned());
                if what == "tool" {
                    m.entry.overrides.fix_arguments(rest, &mut params.arguments);
                }
                let item = rest.to_owned();
                (m, kind_of(what), item)
            }
            methods::RESOURCES_READ
            | methods::RESOURCES_SUBSCRIBE
            | methods::RESOURCES_UNSUBSCRIBE => {
                let full = required_str(&params.uri, "uri")?.to_owned();
                let (m, rest) = self
                    .by_uri(&full)
                    .filter(|(m, rest)| visible.allows(&m.entry.name, ItemKind::Resource, rest))
                    .ok_or_else(|| unknown("resource", &full))?;
                params.uri = Loose::Valid(rest.to_owned());
                (m, ItemKind::Resource, rest.to_owned())
            }
            methods::COMPLETION_COMPLETE => {
                let Loose::Valid(reference) = &mut params.reference else {
                    return Err(ErrorObject::invalid_params(
                        "Invalid params: ref must be an object",
                    ));
                };
                let by_name = match reference.kind.valid().map(String::as_str) {
                    Some("ref/prompt") => true,
                    Some("ref/resource") => false,
                    _ => {
                        return Err(ErrorObject::invalid_params(
                            "Invalid params: unknown ref type",
                        ));
                    }
                };
                let (full, what) = if by_name {
                    (required_str(&reference.name, "name")?.to_owned(), "prompt")
                } else {
                    (required_str(&reference.uri, "uri")?.to_owned(), "resource")
                };
                let found = if by_name {
                    self.by_name(&full)
                } else {
                    self.by_uri(&full)
                };
                let (m, rest) = found
                    .filter(|(m, rest)| visible.allows(&m.entry.name, kind_of(what), rest))
                    .ok_or_else(|| unknown(what, &full))?;
                if by_name {
                    reference.name = Loose::Valid(rest.to_owned());
                } else {
                    reference.uri = Loose::Valid(rest.to_owned());
                }
                (m, kind_of(what), rest.to_owned())
            }
            other => return Err(ErrorObject::method_not_found(other)),
        };
        let name = member.entry.name.clone();
        visible.spend(r, &name, kind, &item).await?;
        let naming = member.naming.clone();
        let result = member.call(r, method, write(&params)?).await?;
        // An unprefixed upstream's links are already the URIs clients see.
        if !naming.is_prefixed()
            || !matches!(
                method,
                methods::TOOLS_CALL | methods::PROMPTS_GET | methods::RESOURCES_READ
            )
        {
            return Ok(result);
        }
        let mut linking: Linking = take(result);
        prefix_result(&naming, method, &mut linking);
        write(&linking)
    }
}

impl Service for AggregatorService {
    fn methods(&self) -> Vec<String> {
        FORWARDED_METHODS.iter().map(|m| (*m).to_owned()).collect()
    }

    async fn handle_request(self: Arc<Self>, r: Request) -> HandlerResult {
        let inner = &self.inner;
        {
            match r.method.as_str() {
                methods::TOOLS_LIST => inner.list(&r, methods::TOOLS_LIST, ListKind::Tools).await,
                methods::PROMPTS_LIST => {
                    inner
                        .list(&r, methods::PROMPTS_LIST, ListKind::Prompts)
                        .await
                }
                methods::RESOURCES_LIST => {
                    inner
                        .list(&r, methods::RESOURCES_LIST, ListKind::Resources)
                        .await
                }
                methods::RESOURCES_TEMPLATES_LIST => {
                    inner
                        .list(&r, methods::RESOURCES_TEMPLATES_LIST, ListKind::Templates)
                        .await
                }
                methods::RESOURCES_SUBSCRIBE => inner.subscription(&r, true).await,
                methods::RESOURCES_UNSUBSCRIBE => inner.subscription(&r, false).await,
                methods::SUBSCRIPTIONS_LISTEN => inner.listen(&r).await,
                _ => inner.routed(&r).await,
            }
        }
    }

    fn on_initialized(&self, peer: Peer, _version: ProtocolVersion) {
        self.inner.session_started(&peer);
    }
}

impl ServiceFactory for Aggregator {
    type Service = AggregatorService;

    fn make(&self) -> (EngineConfig, AggregatorService) {
        (self.engine_config(), (*self.service).clone())
    }

    fn make_shared(&self) -> (Arc<EngineConfig>, Arc<AggregatorService>) {
        (self.inner.config(), self.service.clone())
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn linked(method: &str, v: Value) -> Value {
        let mut l: Linking = read(v.as_object().unwrap());
        prefix_result(&Naming::prefixed("up"), method, &mut l);
        Value::Object(write(&l).unwrap())
    }

    #[test]
    fn an_unprefixed_upstreams_links_are_left_as_they_are() {
        let v = json!({"content": [
            {"type": "resource_link", "uri": "f://a", "name": "a"},
            {"type": "resource", "resource": {"uri": "f://b", "text": "t"}}
        ]});
        let mut l: Linking = read(v.as_object().unwrap());
        prefix_result(&Naming::unprefixed("up"), methods::TOOLS_CALL, &mut l);
        assert_eq!(Value::Object(write(&l).unwrap()), v);
    }

    #[test]
    fn only_linked_resource_uris_are_prefixed() {
        assert_eq!(
            linked(
                methods::TOOLS_CALL,
                json!({"content": [
                    {"type": "resource_link", "uri": "f://a", "name": "a"},
                    {"type": "resource", "resource": {"uri": "f://b", "text": "t"}},
                    {"type": "text", "text": "f://c", "uri": "f://c"},
                    3
                ], "structuredContent": {"uri": "f://d"}, "isError": false})
            ),
            json!({"content": [
                {"type": "resource_link", "uri": "up+f://a", "name": "a"},
                {"type": "resource", "resource": {"uri": "up+f://b", "text": "t"}},
                {"type": "text", "text": "f://c", "uri": "f://c"},
                3
            ], "structuredContent": {"uri": "f://d"}, "isError": false})
        );
        assert_eq!(
            linked(
                methods::PROMPTS_GET,
                json!({"messages": [{"role": "user", "content": {"type": "resource_link", "uri": "f://a"}}]})
            ),
            json!({"messages": [{"role": "user", "content": {"type": "resource_link", "uri": "up+f://a"}}]})
        );
        assert_eq!(
            linked(
                methods::RESOURCES_READ,
                json!({"contents": [{"uri": "f://a", "blob": "AA=="}], "ttlMs": 5})
            ),
            json!({"contents": [{"uri": "up+f://a", "blob": "AA=="}], "ttlMs": 5})
        );
    }
}
