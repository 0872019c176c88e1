//! [`Ctx`]: where in a peer's JSON file a value is (its line, for JSON Lines) and the typed
//! reads that name that place in their errors — shared by the vLLM and SGLang importers.

use serde_json::Value;

use super::json::{self, OrderedObject};
use super::ImportError;
use crate::result::{Percentile, Summary};

pub(crate) struct Ctx {
    pub(crate) line: Option<usize>,
    /// Top-level keys whose value was a bare `NaN`/`Infinity`/`-Infinity` (read as `null`
    /// by the JSON filter), with that value.
    non_finite: Vec<(String, f64)>,
}

impl Ctx {
    /// A context for the object at `line`, knowing which top-level keys of the object's
    /// text held a bare non-finite token (see [`crate::import::bare_non_finite_keys`]): a latency
    /// statistic that Python wrote as `NaN` is kept as NaN (and printed `nan`, as vLLM
    /// printed it), an infinite one is an error; neither is dropped.
    pub(crate) fn with_non_finite(line: Option<usize>, text: &[u8]) -> Self {
        Ctx {
            line,
            non_finite: json::bare_non_finite_keys(text),
        }
    }

    pub(crate) fn path(&self, key: &str) -> String {
        match self.line {
            Some(n) => format!("line {n}: $.{key}"),
            None => format!("$.{key}"),
        }
    }

    pub(crate) fn type_error(&self, key: &str, expected: &str, v: &Value) -> ImportError {
        let found = match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        ImportError::invalid(
            self.path(key),
            format!("expected {expected}, found {found}"),
        )
    }

    pub(crate) fn f64(&self, obj: &OrderedObject, key: &str) -> Result<Option<f64>, ImportError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(v) => Err(self.type_error(key, "a number", v)),
        }
    }

    pub(crate) fn non_negative(
        &self,
        obj: &OrderedObject,
        key: &str,
    ) -> Result<Option<f64>, ImportError> {
        match self.f64(obj, key)? {
            Some(x) if x < 0.0 => Err(ImportError::invalid(
                self.path(key),
                format!("negative value {x}"),
            )),
            other => Ok(other),
        }
    }

    pub(crate) fn u64(&self, obj: &OrderedObject, key: &str) -> Result<Option<u64>, ImportError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) => Ok(Some(v)),
                None => match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1e18 => Ok(Some(f as u64)),
                    _ => Err(ImportError::invalid(
                        self.path(key),
                        format!("expected a count, found {n}"),
                    )),
                },
            },
            Some(v) => Err(self.type_error(key, "an integer", v)),
        }
    }

    pub(crate) fn string(
        &self,
        obj: &OrderedObject,
        key: &str,
    ) -> Result<Option<String>, ImportError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.type_error(key, "a string", v)),
        }
    }

    pub(crate) fn f64_list(
        &self,
        obj: &OrderedObject,
        key: &str,
    ) -> Result<Option<Vec<f64>>, ImportError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Number(n) => n
                        .as_f64()
                        .ok_or_else(|| self.type_error(&format!("{key}[{i}]"), "a number", v)),
                    Value::Null => Ok(0.0),
                    other => Err(self.type_error(&format!("{key}[{i}]"), "a number", other)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(self.type_error(key, "a list", v)),
        }
    }

    /// Summaries for every metric with `mean_/median_/std_/p*_{m}_ms` keys, in key order.
    pub(crate) fn summaries(
        &self,
        obj: &OrderedObject,
        names: &[(&str, &str)],
    ) -> Result<Vec<(String, Summary)>, ImportError> {
        let mut out: Vec<(String, Summary)> = Vec::new();
        for (key, value) in &obj.0 {
            let Some(body) = key.strip_suffix("_ms") else {
                continue;
            };
            for (metric, suffix) in names {
                let Some(stat) = body.strip_suffix(suffix).and_then(|s| s.strip_suffix('_')) else {
                    continue;
                };
                let v = match value {
                    Value::Number(n) => n.as_f64(),
                    Value::Null => self
                        .non_finite
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|&(_, v)| v),
                    other => return Err(self.type_error(key, "a number", other)),
                };
                if let Some(x) = v.filter(|x| !x.is_nan()) {
                    if !x.is_finite() || x < 0.0 {
                        return Err(ImportError::invalid(
                            self.path(key),
                            format!("negative or non-finite latency {x}"),
                        ));
                    }
                }
                let idx = match out.iter().position(|(m, _)| m == metric) {
                    Some(i) => i,
                    None => {
                        out.push((metric.to_string(), Summary::default()));
                        out.len() - 1
                    }
                };
                let s = &mut out[idx].1;
                match stat {
                    "mean" => s.mean = v,
                    "median" => s.median = v,
                    "std" => s.std = v,
                    "min" => s.min = v,
                    "max" => s.max = v,
                    p => {
                        if let Some(rank) = p.strip_prefix('p').and_then(|r| r.parse::<f64>().ok())
                        {
                            s.percentiles.push(Percentile { p: rank, value: v });
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}
