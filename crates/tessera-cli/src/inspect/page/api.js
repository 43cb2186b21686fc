// The inspector's HTTP API (docs/inspect.md), with the launch's token.

const params = new URLSearchParams(location.search);
if (params.has("token")) {
  sessionStorage.setItem("tessera-token", params.get("token"));
}
export const token = sessionStorage.getItem("tessera-token") || "";

// Calls the API; resolves with the JSON answer (null for 204), rejects with
// an Error whose message is the API's.
export async function api(method, path, body) {
  const init = { method, headers: { Authorization: `Bearer ${token}` } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(`/api/${path}`, init);
  if (response.status === 204) return null;
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    throw new Error(`${method} /api/${path}: HTTP ${response.status}`);
  }
  if (!response.ok) {
    const error = new Error(answer?.error?.message || `HTTP ${response.status}`);
    error.detail = answer?.error;
    throw error;
  }
  return answer;
}

// Follows the journal: onEvent(event) for each, onHello() when the stream
// (re)starts and replays the history.
export function follow(onEvent, onHello) {
  const source = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
  source.addEventListener("hello", () => onHello());
  source.addEventListener("message", (m) => {
    try {
      onEvent(JSON.parse(m.data));
    } catch (e) {
      console.error("bad event", e);
    }
  });
  source.addEventListener("lagged", () => source.close() || follow(onEvent, onHello));
  return source;
}
