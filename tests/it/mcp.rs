//! The MCP server, driven by rmcp's real client: over stdio (a spawned `mem7 mcp`) and
//! over streamable HTTP (a spawned `mem7 serve` on a loopback port).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use crate::world::{self, Sandbox};
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

mod answers;
mod block;
mod clocks;
mod http;
mod rules;
mod scopes;
mod servers;
mod tools;

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

pub(crate) async fn connect(sb: &Sandbox) -> Client {
    let cmd = tokio::process::Command::from(sb.command(&["mcp"], None));
    let transport = TokioChildProcess::new(cmd).expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
}

/// Calls a tool; returns whether it was an error and its text.
pub(crate) async fn call(client: &Client, tool: &str, args: Value) -> (bool, String) {
    let args = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (result.is_error == Some(true), text)
}

/// Calls a tool that must succeed; returns its structured content (checked against the
/// tool's declared output schema) and its text.
async fn call_full(client: &Client, tool: &str, args: Value) -> (Value, String) {
    let args_map = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args_map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        result.is_error != Some(true),
        "{tool} {args} failed: {text}"
    );
    let structured = result
        .structured_content
        .unwrap_or_else(|| panic!("{tool}: no structuredContent: {text}"));
    let schema = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.name == tool)
        .and_then(|t| t.output_schema)
        .unwrap_or_else(|| panic!("{tool} declares no outputSchema"));
    let problems = schema_problems(&Value::Object((*schema).clone()), &structured, "$");
    assert!(
        problems.is_empty(),
        "{tool}: structured content does not fit its schema: {problems:?}\n{structured:#}"
    );
    (structured, text)
}

/// Calls a tool that must succeed; returns its structured content.
pub(crate) async fn call_json(client: &Client, tool: &str, args: Value) -> Value {
    call_full(client, tool, args).await.0
}

/// Where `value` breaks `schema` (the JSON Schema subset mem7's output schemas use: type,
/// required, properties, items, enum).
fn schema_problems(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    let type_ok = |t: &str| match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    };
    match &schema["type"] {
        Value::String(t) if !type_ok(t) => out.push(format!("{at}: not {t}")),
        Value::Array(ts) if !ts.iter().any(|t| t.as_str().is_some_and(type_ok)) => {
            out.push(format!("{at}: none of {ts:?}"))
        }
        _ => {}
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        out.push(format!("{at}: {value} not in {allowed:?}"));
    }
    if let Some(required) = schema["required"].as_array() {
        for r in required.iter().filter_map(Value::as_str) {
            if value.get(r).is_none() {
                out.push(format!("{at}: missing {r}"));
            }
        }
    }
    if let (Some(props), Some(obj)) = (schema["properties"].as_object(), value.as_object()) {
        for (k, v) in obj {
            match props.get(k) {
                Some(s) => out.extend(schema_problems(s, v, &format!("{at}.{k}"))),
                None => out.push(format!("{at}: {k} is not declared")),
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            out.extend(schema_problems(items, v, &format!("{at}[{i}]")));
        }
    }
    out
}

/// The values of a list of versions, or of the versions (or hits) a tool answered.
fn values(v: &Value) -> Vec<&str> {
    let list = v.get("versions").or_else(|| v.get("hits")).unwrap_or(v);
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x["value"].as_str().unwrap_or_default())
        .collect()
}

/// The tool list as the snapshot holds it.
fn tools_snapshot(tools: &[rmcp::model::Tool]) -> String {
    let mut items: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": t.input_schema.as_ref(),
                "annotations": t.annotations,
                "outputSchema": t.output_schema.as_ref(),
            })
        })
        .collect();
    items.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let mut s = serde_json::to_string_pretty(&items).unwrap();
    s.push('\n');
    s
}

/// A `mem7 mcp` whose standard error goes to `log`.
async fn connect_logged(sb: &Sandbox, log: &std::path::Path) -> Client {
    let cmd = tokio::process::Command::from(sb.command(&["mcp"], None));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
}

async fn connect_at(sb: &Sandbox, now: &str) -> Client {
    let cmd = tokio::process::Command::from(sb.command(&["mcp"], Some(now)));
    let transport = TokioChildProcess::new(cmd).expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
}
