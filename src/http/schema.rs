//! JSON Schemas of tools and response formats: compiled once with the `jsonschema` crate,
//! checked against an answer's JSON text (the client: is a tool call's `arguments`, is a
//! structured answer, valid?), and turned into a conforming example (the example server's
//! answers) or a broken one (its `--invalid-tool-calls` share).
//!
//! ```
//! use serde_json::json;
//! use servebench::http::schema::{example, JsonSchema};
//! let s = JsonSchema::new(json!({"type": "object", "properties": {"city": {"type": "string"}},
//!     "required": ["city"]})).unwrap();
//! assert!(s.check(r#"{"city": "Lyon"}"#).is_ok());
//! assert!(s.check(r#"{"town": "Lyon"}"#).unwrap_err().contains("\"city\" is a required property"));
//! assert!(s.check("{not json").unwrap_err().starts_with("not JSON"));
//! assert!(s.check(&example(s.source()).to_string()).is_ok());
//! ```

use std::sync::Arc;

use serde_json::{json, Map, Value};

/// A compiled JSON Schema and the JSON it was compiled from.
#[derive(Clone)]
pub struct JsonSchema {
    source: Value,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for JsonSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("JsonSchema").field(&self.source).finish()
    }
}

impl PartialEq for JsonSchema {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl JsonSchema {
    /// Compiles `source`; `Err` says why it is not a schema.
    pub fn new(source: Value) -> Result<JsonSchema, String> {
        let validator = jsonschema::validator_for(&source).map_err(|e| e.to_string())?;
        Ok(JsonSchema {
            source,
            validator: Arc::new(validator),
        })
    }

    /// The schema's JSON.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// Whether `text` parses as JSON and matches the schema; `Err` says why not (the first
    /// violation, with where it is).
    pub fn check(&self, text: &str) -> Result<(), String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        self.validator.validate(&v).map_err(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{e} (at {at})")
            }
        })
    }
}

/// The request field a chat request's schema goes in: OpenAI's `response_format`, or vLLM's
/// own structured-output fields — `structured_outputs: {"json": …}` (vLLM 0.12 and later)
/// or `guided_json` (before; vLLM's structured-outputs docs name both).
///
/// ```
/// use serde_json::json;
/// use servebench::http::schema::{JsonSchema, SchemaField};
/// let s = JsonSchema::new(json!({"type": "object"})).unwrap();
/// assert_eq!(SchemaField::StructuredOutputs.field(&s), ("structured_outputs", json!({"json": {"type": "object"}})));
/// assert_eq!(SchemaField::GuidedJson.field(&s).0, "guided_json");
/// assert_eq!(SchemaField::ResponseFormat.field(&s).1["type"], "json_schema");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SchemaField {
    /// `response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`.
    #[default]
    ResponseFormat,
    /// vLLM's `structured_outputs: {"json": SCHEMA}`.
    StructuredOutputs,
    /// vLLM's older `guided_json: SCHEMA`.
    GuidedJson,
}

impl SchemaField {
    /// The field's name and value for `schema`.
    pub fn field(self, schema: &JsonSchema) -> (&'static str, Value) {
        match self {
            SchemaField::ResponseFormat => (
                "response_format",
                json!({"type": "json_schema", "json_schema":
                    {"name": "answer", "schema": schema.source(), "strict": true}}),
            ),
            SchemaField::StructuredOutputs => {
                ("structured_outputs", json!({"json": schema.source()}))
            }
            SchemaField::GuidedJson => ("guided_json", schema.source().clone()),
        }
    }
}

/// An OpenAI `tools` array, each function's `parameters` compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct Tools {
    json: Value,
    functions: Vec<(String, JsonSchema)>,
}

impl Tools {
    /// Reads an OpenAI `tools` array (`[{"type": "function", "function": {"name": …,
    /// "parameters": {…}}}, …]`); `Err` names the entry that is wrong.
    ///
    /// ```
    /// use serde_json::json;
    /// use servebench::http::schema::Tools;
    /// let t = Tools::from_json(json!([{"type": "function", "function": {"name": "get_weather",
    ///     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
    ///     "required": ["city"]}}}])).unwrap();
    /// assert!(t.check_call("get_weather", r#"{"city": "Oslo"}"#).is_ok());
    /// assert!(t.check_call("get_weather", "{}").is_err());
    /// assert!(t.check_call("get_time", "{}").unwrap_err().contains("no tool"));
    /// assert!(Tools::from_json(json!({"name": "x"})).is_err());
    /// ```
    pub fn from_json(json: Value) -> Result<Tools, String> {
        let list = json
            .as_array()
            .ok_or("`tools` must be an array of {\"type\": \"function\", \"function\": …}")?;
        if list.is_empty() {
            return Err("`tools` is empty".into());
        }
        let mut functions = Vec::with_capacity(list.len());
        for (i, t) in list.iter().enumerate() {
            let f = t
                .get("function")
                .ok_or_else(|| format!("tools[{i}] has no `function`"))?;
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("tools[{i}].function has no string `name`"))?;
            let params = f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            let schema = JsonSchema::new(params)
                .map_err(|e| format!("tools[{i}].function.parameters: {e}"))?;
            functions.push((name.to_string(), schema));
        }
        Ok(Tools { json, functions })
    }

    /// The array as sent to chat completions.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The same tools in the Responses API's shape: `{"type": "function", "name",
    /// "description", "parameters"}` (the function's fields one level up).
    pub fn responses_json(&self) -> Value {
        self.each(|f| {
            let mut t = json!({"type": "function"});
            for key in ["name", "description", "parameters", "strict"] {
                if let Some(v) = f.get(key) {
                    t[key] = v.clone();
                }
            }
            t
        })
    }

    /// The same tools in Anthropic's Messages API shape: `{"name", "description",
    /// "input_schema"}`.
    pub fn messages_json(&self) -> Value {
        self.each(|f| {
            let mut t = json!({});
            for (from, to) in [
                ("name", "name"),
                ("description", "description"),
                ("parameters", "input_schema"),
            ] {
                if let Some(v) = f.get(from) {
                    t[to] = v.clone();
                }
            }
            if t.get("input_schema").is_none() {
                t["input_schema"] = json!({"type": "object"});
            }
            t
        })
    }

    fn each(&self, f: impl Fn(&Value) -> Value) -> Value {
        Value::Array(
            self.json
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("function"))
                .map(f)
                .collect(),
        )
    }

    /// The functions' names and parameter schemas, in order.
    pub fn functions(&self) -> &[(String, JsonSchema)] {
        &self.functions
    }

    /// Whether a call of `name` with `arguments` (JSON text) is valid: a known tool, its
    /// arguments parse and match its parameters schema.
    pub fn check_call(&self, name: &str, arguments: &str) -> Result<(), String> {
        let (_, schema) = self
            .functions
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| format!("no tool named `{name}` was offered"))?;
        schema
            .check(arguments)
            .map_err(|e| format!("tool {name}: {e}"))
    }
}

/// A JSON value that conforms to `schema` (the common keywords: `type`, `properties`,
/// `required`, `items`, `enum`, `const`, `minimum`, `minItems`, `minLength`), for the
/// example server's answers: every property filled, strings `"lorem"` (padded to
/// `minLength`), integers `minimum` or 1, numbers `minimum` or 1.5, booleans true, arrays of
/// `minItems` (at least 1) examples of `items`.
pub fn example(schema: &Value) -> Value {
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return example(first);
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    let min = |k: &str| schema.get(k).and_then(Value::as_f64);
    match ty {
        "object" => {
            let mut m = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, s) in props {
                    m.insert(k.clone(), example(s));
                }
            }
            Value::Object(m)
        }
        "array" => {
            let n = min("minItems").unwrap_or(1.0).max(1.0) as usize;
            let item = schema.get("items").map_or(json!("lorem"), example);
            Value::Array(vec![item; n])
        }
        "integer" => json!(min("minimum").map_or(1, |m| m.ceil() as i64)),
        "number" => json!(min("minimum").unwrap_or(1.5)),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => {
            let n = min("minLength").unwrap_or(0.0) as usize;
            let mut s = String::from("lorem");
            while s.len() < n {
                s.push_str(" lorem");
            }
            json!(s)
        }
    }
}

/// JSON text that does not conform to `schema`: the example without its first required
/// property, or, when nothing is required, the example cut short (not JSON at all).
pub fn broken(schema: &Value) -> String {
    let mut v = example(schema);
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str);
    match (&mut v, required) {
        (Value::Object(m), Some(k)) => {
            m.remove(k);
            v.to_string()
        }
        _ => {
            let text = v.to_string();
            text[..text.len().saturating_sub(1)].to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table-driven: each schema's example is valid and its broken text is not.
    #[test]
    fn examples_conform_and_broken_texts_do_not() {
        for schema in [
            json!({"type": "object", "properties": {"city": {"type": "string"},
                "unit": {"enum": ["c", "f"]}, "days": {"type": "integer", "minimum": 1}},
                "required": ["city", "days"]}),
            json!({"type": "object", "properties": {"items": {"type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string",
                "minLength": 12}, "price": {"type": "number"}}, "required": ["name"]},
                "minItems": 2}, "ok": {"type": "boolean"}}, "required": ["items"]}),
            json!({"type": "object", "properties": {"q": {"type": ["string", "null"]}}}),
        ] {
            let s = JsonSchema::new(schema.clone()).unwrap();
            let good = example(&schema).to_string();
            assert!(s.check(&good).is_ok(), "{good}: {:?}", s.check(&good));
            let bad = broken(&schema);
            assert!(s.check(&bad).is_err(), "{bad}");
        }
    }
}
