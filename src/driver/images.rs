//! Images for multimodal chat requests: their sizes (one size, or weighted buckets as
//! `vllm bench serve --dataset-name random-mm` draws them), the prompt tokens a Qwen-VL
//! preprocessor turns an image into ([`VisionPreprocessor`]), and, with the `http` feature,
//! the seeded PNG the client sends ([`png_image`]).
//!
//! # Vision tokens
//!
//! Qwen3.5 is natively multimodal: its vision tower is the Qwen3-VL ViT (the model's
//! `config.json`, `vision_config`: `patch_size` 16, `spatial_merge_size` 2,
//! `temporal_patch_size` 2, depth 27, hidden size 1152). Its image processor first resizes
//! an image with `smart_resize` (Qwen2-VL's, in Hugging Face `transformers`): each side
//! rounded to a multiple of `patch_size × spatial_merge_size` = 32 pixels (Python's
//! round-half-to-even), then scaled down (floor) when the area exceeds `max_pixels` or up
//! (ceil) when it is under `min_pixels` (the processor's `size.shortest_edge` = 65 536 and
//! `size.longest_edge` = 16 777 216 pixels in Qwen3-VL's `preprocessor_config.json`). The
//! ViT sees one 16 × 16 patch per (resized) 16 × 16 pixels; the merger folds 2 × 2 patches
//! into one token, and the prompt holds those tokens between `<|vision_start|>` and
//! `<|vision_end|>`:
//!
//! ```
//! use servebench::driver::images::{ImageSize, VisionPreprocessor};
//! let qwen = VisionPreprocessor::QWEN3_5;
//! // 512 × 512: 32 × 32 patches, 16 × 16 = 256 tokens, + 2 markers.
//! assert_eq!(qwen.patches(ImageSize::new(512, 512)), 1024);
//! assert_eq!(qwen.prompt_tokens(ImageSize::new(512, 512)), 258);
//! // 1280 × 720: 720 rounds to 704 (22 × 32), so 40 × 22 tokens.
//! assert_eq!(qwen.prompt_tokens(ImageSize::new(1280, 720)), 40 * 22 + 2);
//! // 100 × 100 is under min_pixels: scaled up to 256 × 256, 64 tokens.
//! assert_eq!(qwen.prompt_tokens(ImageSize::new(100, 100)), 64 + 2);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::rng::SplitMix64;

/// An image's size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageSize {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
}

impl ImageSize {
    /// `width × height`.
    pub const fn new(width: u32, height: u32) -> ImageSize {
        ImageSize { width, height }
    }

    /// Pixels.
    pub fn pixels(self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

impl fmt::Display for ImageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// Why an image size or size list did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad image size `{text}`: {reason}")]
pub struct ImageSizeError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The most pixels on one side servebench will draw (Qwen3-VL's `longest_edge` is 2^24
/// pixels of area: 4096 × 4096).
pub const MAX_SIDE_PX: u32 = 8192;

impl FromStr for ImageSize {
    type Err = ImageSizeError;

    /// `WIDTHxHEIGHT`, e.g. `1024x768`.
    fn from_str(s: &str) -> Result<ImageSize, ImageSizeError> {
        let bad = |reason: &str| ImageSizeError {
            text: s.to_string(),
            reason: reason.to_string(),
        };
        let (w, h) = s
            .trim()
            .split_once(['x', 'X', '×'])
            .ok_or_else(|| bad("expected WIDTHxHEIGHT, e.g. 1024x768"))?;
        let side = |t: &str, name: &str| -> Result<u32, ImageSizeError> {
            match t.trim().parse::<u32>() {
                Ok(v) if (1..=MAX_SIDE_PX).contains(&v) => Ok(v),
                _ => Err(bad(&format!("{name} must be 1 to {MAX_SIDE_PX} pixels"))),
            }
        };
        Ok(ImageSize::new(side(w, "width")?, side(h, "height")?))
    }
}

/// What a request's images are: `per_request` images, each of a size drawn from weighted
/// buckets (vLLM's `--random-mm-bucket-config`, a map from `(height, width, frames)` to a
/// probability; here written `WxH:weight,…`, frames always 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ImageLoad {
    /// Images in each request.
    pub per_request: u32,
    /// Sizes and their weights (summing to any positive total).
    pub sizes: Vec<(ImageSize, f64)>,
    /// Images from a dataset file ([`ImageLoad::from_file`]): when any, request `id`'s
    /// image `i` is entry `(id × per_request + i) mod len`, sent as it is, instead of a
    /// generated PNG of a drawn size.
    pub sources: Vec<ImageSource>,
}

/// An image of a dataset file: its URL (an `http(s)` URL the server fetches, or a `data:`
/// URL), and, when the file holds the image itself (a base64 data URL of a PNG or JPEG),
/// its size and encoded bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSource {
    /// The URL as sent in the request's `image_url` part.
    pub url: String,
    /// Width and height, when known from the image's own header.
    pub size: Option<ImageSize>,
    /// Encoded bytes, when the URL carries the image.
    pub bytes: Option<u64>,
}

impl ImageLoad {
    /// `per_request` images of one size.
    pub fn fixed(per_request: u32, size: ImageSize) -> ImageLoad {
        ImageLoad {
            per_request,
            sizes: vec![(size, 1.0)],
            sources: Vec::new(),
        }
    }

    /// `per_request` images with sizes from `spec`: `WxH` or `WxH:weight,WxH:weight,…`.
    ///
    /// ```
    /// use servebench::driver::images::{ImageLoad, ImageSize};
    /// let load = ImageLoad::parse(2, "512x512:3,1024x1024:1").unwrap();
    /// assert_eq!(load.sizes[1], (ImageSize::new(1024, 1024), 1.0));
    /// // Request 7's second image: the same size every time.
    /// assert_eq!(load.size(7, 1), load.size(7, 1));
    /// assert!(ImageLoad::parse(1, "512x512:-1").is_err());
    /// ```
    pub fn parse(per_request: u32, spec: &str) -> Result<ImageLoad, ImageSizeError> {
        let mut sizes = Vec::new();
        for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
            let (size, weight) = match part.split_once(':') {
                Some((s, w)) => {
                    let weight = w
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|w| w.is_finite() && *w > 0.0)
                        .ok_or_else(|| ImageSizeError {
                            text: part.to_string(),
                            reason: "the weight after `:` must be a positive number".into(),
                        })?;
                    (s.parse::<ImageSize>()?, weight)
                }
                None => (part.parse::<ImageSize>()?, 1.0),
            };
            sizes.push((size, weight));
        }
        if sizes.is_empty() {
            return Err(ImageSizeError {
                text: spec.to_string(),
                reason: "no size given".into(),
            });
        }
        Ok(ImageLoad {
            per_request,
            sizes,
            sources: Vec::new(),
        })
    }

    /// The size of request `id`'s image `index`: a seeded draw from the buckets, the same
    /// for the same request every time.
    pub fn size(&self, id: u64, index: u32) -> ImageSize {
        let total: f64 = self.sizes.iter().map(|(_, w)| w).sum();
        let mut rng = SplitMix64::new(id.wrapping_mul(0x9e37_79b9) ^ u64::from(index) << 40);
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let mut acc = 0.0;
        for (size, w) in &self.sizes {
            acc += w;
            if u < acc {
                return *size;
            }
        }
        self.sizes.last().map_or(ImageSize::new(1, 1), |(s, _)| *s)
    }

    /// The sizes of request `id`'s images.
    pub fn sizes_of(&self, id: u64) -> impl Iterator<Item = ImageSize> + '_ {
        (0..self.per_request).map(move |i| self.size(id, i))
    }
}

/// A Qwen-VL image preprocessor's geometry: how many patches the ViT sees and how many
/// prompt tokens an image becomes. See the module docs for the rules and their sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisionPreprocessor {
    /// ViT patch side, pixels.
    pub patch_size: u32,
    /// Patches merged into one token per side.
    pub merge_size: u32,
    /// The smallest area the image is scaled up to, pixels.
    pub min_pixels: u64,
    /// The largest area the image is scaled down to, pixels.
    pub max_pixels: u64,
    /// Marker tokens around each image (`<|vision_start|>`, `<|vision_end|>`).
    pub marker_tokens: u64,
}

impl VisionPreprocessor {
    /// Qwen3.5's (Qwen3-VL's) preprocessor: patch 16, merge 2, 65 536 to 16 777 216 pixels.
    pub const QWEN3_5: VisionPreprocessor = VisionPreprocessor {
        patch_size: 16,
        merge_size: 2,
        min_pixels: 65_536,
        max_pixels: 16_777_216,
        marker_tokens: 2,
    };

    /// The size the processor resizes `size` to (`smart_resize`).
    pub fn resized(&self, size: ImageSize) -> ImageSize {
        let factor = f64::from(self.patch_size * self.merge_size);
        let (h, w) = (f64::from(size.height), f64::from(size.width));
        let mut h_bar = (h / factor).round_ties_even().max(1.0) * factor;
        let mut w_bar = (w / factor).round_ties_even().max(1.0) * factor;
        if h_bar * w_bar > self.max_pixels as f64 {
            let beta = (h * w / self.max_pixels as f64).sqrt();
            h_bar = ((h / beta / factor).floor() * factor).max(factor);
            w_bar = ((w / beta / factor).floor() * factor).max(factor);
        } else if h_bar * w_bar < self.min_pixels as f64 {
            let beta = (self.min_pixels as f64 / (h * w)).sqrt();
            h_bar = (h * beta / factor).ceil() * factor;
            w_bar = (w * beta / factor).ceil() * factor;
        }
        // Sides are at most a few thousand pixels: exact in f64 and in u32.
        ImageSize::new(w_bar as u32, h_bar as u32)
    }

    /// ViT patches of one image (after resizing; one frame).
    pub fn patches(&self, size: ImageSize) -> u64 {
        let r = self.resized(size);
        u64::from(r.width / self.patch_size) * u64::from(r.height / self.patch_size)
    }

    /// Vision tokens of one image: its patches over `merge_size²`.
    pub fn vision_tokens(&self, size: ImageSize) -> u64 {
        self.patches(size) / u64::from(self.merge_size * self.merge_size)
    }

    /// Prompt tokens of one image: its vision tokens and the markers around them.
    pub fn prompt_tokens(&self, size: ImageSize) -> u64 {
        self.vision_tokens(size) + self.marker_tokens
    }
}

/// The size a PNG or JPEG file declares (PNG's `IHDR`; JPEG's first start-of-frame
/// marker), read from its first bytes without decoding it; `None` for anything else.
///
/// ```
/// use servebench::driver::images::{image_size, ImageSize};
/// let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
/// png.extend_from_slice(&640u32.to_be_bytes());
/// png.extend_from_slice(&480u32.to_be_bytes());
/// assert_eq!(image_size(&png), Some(ImageSize::new(640, 480)));
/// assert_eq!(image_size(b"GIF89a"), None);
/// ```
pub fn image_size(bytes: &[u8]) -> Option<ImageSize> {
    let be32 = |b: &[u8]| -> Option<u32> { Some(u32::from_be_bytes(b.try_into().ok()?)) };
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.get(12..16) == Some(b"IHDR") {
        let w = be32(bytes.get(16..20)?)?;
        let h = be32(bytes.get(20..24)?)?;
        return (w > 0 && h > 0).then_some(ImageSize::new(w, h));
    }
    if bytes.starts_with(&[0xff, 0xd8]) {
        // Walk the marker segments to the first SOFn (C0–CF but C4, C8, CC).
        let mut i = 2;
        while i + 4 <= bytes.len() {
            if bytes[i] != 0xff {
                return None;
            }
            let marker = bytes[i + 1];
            let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
            if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
                let seg = bytes.get(i + 5..i + 9)?;
                let h = u32::from(u16::from_be_bytes([seg[0], seg[1]]));
                let w = u32::from(u16::from_be_bytes([seg[2], seg[3]]));
                return (w > 0 && h > 0).then_some(ImageSize::new(w, h));
            }
            i += 2 + len;
        }
    }
    None
}

/// A seeded RGB PNG of `size`, different for each `seed` (so a server's multimodal cache,
/// keyed on the image's hash, never hits): per-pixel noise like `random-mm`'s, over a
/// gradient, encoded with the `png` crate's fast compression.
#[cfg(feature = "http")]
pub fn png_image(size: ImageSize, seed: u64) -> Vec<u8> {
    let (w, h) = (size.width as usize, size.height as usize);
    let mut rng = SplitMix64::new(seed ^ 0x1d8e_4e27_c47d_124f);
    let mut pixels = Vec::with_capacity(w * h * 3);
    for y in 0..h {
        for x in 0..w {
            let z = rng.next_u64();
            // Eight noise bits per channel would not compress; six over a gradient keep
            // the file near a photo's size.
            let g = ((x * 255 / w.max(1)) as u8, (y * 255 / h.max(1)) as u8);
            pixels.push(g.0.wrapping_add((z & 0x3f) as u8));
            pixels.push(g.1.wrapping_add((z >> 8 & 0x3f) as u8));
            pixels.push(((z >> 16) & 0xff) as u8 / 4 + 96);
        }
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, size.width, size.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        // Writing into a Vec fails only on a size the encoder rejects; the sides were
        // checked when parsed (1 to MAX_SIDE_PX).
        if let Ok(mut writer) = enc.write_header() {
            let _ = writer.write_image_data(&pixels);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vision_tokens_follow_smart_resize() {
        let q = VisionPreprocessor::QWEN3_5;
        // (width, height) → resized (width, height), from smart_resize by hand.
        for (w, h, rw, rh) in [
            (512, 512, 512, 512),
            (1024, 1024, 1024, 1024),
            (1280, 720, 1280, 704),
            (48, 48, 256, 256),       // under min_pixels: scaled up
            (80, 80, 256, 256),       // 2.5 rounds to 2 (ties to even), then scaled up
            (8192, 8192, 4096, 4096), // over max_pixels: scaled down
            (1000, 500, 992, 512),
        ] {
            assert_eq!(
                q.resized(ImageSize::new(w, h)),
                ImageSize::new(rw, rh),
                "{w}x{h}"
            );
        }
        assert_eq!(q.vision_tokens(ImageSize::new(1024, 1024)), 1024);
        assert_eq!(q.prompt_tokens(ImageSize::new(1024, 1024)), 1026);
    }

    #[test]
    fn sizes_parse_and_draw_with_their_weights() {
        assert_eq!(
            "640x480".parse::<ImageSize>().unwrap(),
            ImageSize::new(640, 480)
        );
        for bad in ["640", "0x10", "10x", "x10", "99999x1"] {
            assert!(bad.parse::<ImageSize>().is_err(), "{bad}");
        }
        let load = ImageLoad::parse(1, "256x256:3,1024x1024:1").unwrap();
        let big = (0..4000)
            .filter(|&id| load.size(id, 0) == ImageSize::new(1024, 1024))
            .count();
        // A quarter of the draws, within sampling error (sd ≈ 27).
        assert!((900..1100).contains(&big), "{big}");
    }

    #[test]
    fn jpeg_sizes_come_from_the_start_of_frame() {
        // SOI, an APP0 segment of 16 bytes, then SOF0 (precision 8, 300 high, 400 wide).
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        jpeg.extend_from_slice(&[0; 14]);
        jpeg.extend_from_slice(&[0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x2c, 0x01, 0x90]);
        assert_eq!(image_size(&jpeg), Some(ImageSize::new(400, 300)));
        assert_eq!(image_size(&jpeg[..10]), None);
    }

    #[cfg(feature = "http")]
    #[test]
    fn pngs_are_real_and_seeded() {
        let a = png_image(ImageSize::new(64, 32), 1);
        assert_eq!(&a[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(a, png_image(ImageSize::new(64, 32), 1));
        assert_ne!(a, png_image(ImageSize::new(64, 32), 2));
        let decoder = png::Decoder::new(&a[..]);
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (64, 32));
        assert_eq!(image_size(&a), Some(ImageSize::new(64, 32)));
    }
}
