//! Images from a dataset file, for `bench --images N --image-file FILE`: the image URLs of
//! a JSON Lines file in aiperf's single-turn custom-dataset format (each line an object with
//! `image` — one URL — or `images` — a list; its other fields, such as `text`, are not
//! read) or a plain list of URLs, one per line. An `http(s)` URL is sent for the server to
//! fetch (its size unknown here); a base64 `data:` URL of a PNG or JPEG is decoded to learn
//! its size and bytes, so its vision tokens are counted like a generated image's.
//!
//! ```
//! use servebench::driver::images::ImageLoad;
//! # let dir = std::env::temp_dir().join("servebench-image-file-doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("images.jsonl");
//! std::fs::write(&path, concat!(
//!     r#"{"text": "What is this?", "image": "https://example.com/cat.jpg"}"#, "\n",
//!     r#"{"images": ["https://example.com/a.png", "https://example.com/b.png"]}"#, "\n",
//! )).unwrap();
//! let load = ImageLoad::from_file(1, &path).unwrap();
//! assert_eq!(load.sources.len(), 3);
//! assert_eq!(load.sources[2].url, "https://example.com/b.png");
//! assert_eq!(load.sources[0].size, None);
//! ```

use std::path::Path;

use base64::Engine as _;

use super::datasets::DatasetError;
use super::images::{image_size, ImageLoad, ImageSource};

impl ImageLoad {
    /// `per_request` images per request, taken in turn from the file at `path` (see the
    /// module docs for its formats); errors name the file and line.
    pub fn from_file(per_request: u32, path: &Path) -> Result<ImageLoad, DatasetError> {
        let text = std::fs::read_to_string(path).map_err(|source| DatasetError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut sources = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let invalid = |message: String| DatasetError::Invalid {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            };
            let urls = if line.starts_with('{') {
                urls_of_line(line).map_err(invalid)?
            } else {
                vec![line.to_string()]
            };
            for (k, url) in urls.into_iter().enumerate() {
                sources.push(source_of(url).map_err(|e| invalid(format!("image {k}: {e}")))?);
            }
        }
        if sources.is_empty() {
            return Err(DatasetError::Invalid {
                path: path.to_path_buf(),
                line: 0,
                message: "no image URL in the file".into(),
            });
        }
        Ok(ImageLoad {
            per_request,
            sizes: Vec::new(),
            sources,
        })
    }
}

/// The URLs of one JSON line: `image` (a string) or `images` (strings).
fn urls_of_line(line: &str) -> Result<Vec<String>, String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON (column {}): {e}", e.column()))?;
    let text = |x: &serde_json::Value, at: &str| {
        x.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("`{at}` is not a string"))
    };
    match (v.get("image"), v.get("images")) {
        (Some(u), None) => Ok(vec![text(u, "image")?]),
        (None, Some(serde_json::Value::Array(list))) => list
            .iter()
            .enumerate()
            .map(|(i, u)| text(u, &format!("images[{i}]")))
            .collect(),
        (None, Some(_)) => Err("`images` is not a list of URLs".into()),
        (Some(_), Some(_)) => Err("both `image` and `images`: give one".into()),
        (None, None) => Err("no `image` or `images` field".into()),
    }
}

/// One URL: a data URL is decoded for its size and bytes; another URL is kept as it is.
fn source_of(url: String) -> Result<ImageSource, String> {
    let Some(rest) = url.strip_prefix("data:") else {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("`{}` is not an http(s) or data URL", short(&url)));
        }
        return Ok(ImageSource {
            url,
            size: None,
            bytes: None,
        });
    };
    let (meta, data) = rest
        .split_once(',')
        .ok_or("a data URL without a comma before its data")?;
    if !meta.ends_with(";base64") {
        return Err("a data URL that is not base64".into());
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("a data URL whose base64 does not decode: {e}"))?;
    let size = image_size(&raw).ok_or("a data URL that is not a PNG or JPEG image")?;
    Ok(ImageSource {
        size: Some(size),
        bytes: Some(raw.len() as u64),
        url,
    })
}

fn short(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_name_their_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        for (body, says) in [
            ("{\"image\": 3}\n", ":1: `image` is not a string"),
            (
                "\n{\"images\": [\"https://a/x.png\", 7]}\n",
                ":2: `images[1]` is not a string",
            ),
            ("{\"text\": \"hi\"}\n", ":1: no `image` or `images` field"),
            (
                "ftp://x/y.png\n",
                ":1: image 0: `ftp://x/y.png` is not an http(s) or data URL",
            ),
            (
                "data:image/png;base64,AAAA\n",
                ":1: image 0: a data URL that is not a PNG",
            ),
            ("\n\n", "no image URL in the file"),
        ] {
            let p = dir.path().join("f.jsonl");
            std::fs::write(&p, body).unwrap();
            let e = ImageLoad::from_file(1, &p).unwrap_err().to_string();
            assert!(e.contains(says), "{body:?}: {e}");
        }
    }

    #[test]
    fn a_data_url_is_sized_from_its_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        let url = format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&png)
        );
        let s = source_of(url).unwrap();
        assert_eq!(s.size, Some(super::super::images::ImageSize::new(640, 480)));
        assert_eq!(s.bytes, Some(png.len() as u64));
    }
}
