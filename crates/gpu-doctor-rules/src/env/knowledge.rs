//! The knowledge tables: CUDA toolkit → minimum driver, minor-version compatibility floors,
//! driver branch → highest CUDA, torch wheel variants and their architectures, TensorFlow's
//! tested configurations and DCGM's retired-page limits. Each is a CSV file in `data/` with
//! a `source` column, embedded at build time and parsed once.

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

const CUDA_DRIVER: &str = include_str!("../../data/cuda_driver.csv");
const CUDA_MINOR_COMPAT: &str = include_str!("../../data/cuda_minor_compat.csv");
const DRIVER_CUDA: &str = include_str!("../../data/driver_cuda.csv");
const TORCH_CUDA: &str = include_str!("../../data/torch_cuda.csv");
const TENSORFLOW_CUDA: &str = include_str!("../../data/tensorflow_cuda.csv");
const RETIRED_PAGES: &str = include_str!("../../data/retired_pages.csv");

/// A dotted version (`525.60.13`, `12.4`, `2.3.0`): compares numerically (missing parts are
/// 0), prints as it was written (`470.182.03` keeps its zero).
#[derive(Debug, Clone)]
pub struct Version {
    parts: Vec<u32>,
    text: String,
}

impl Version {
    /// Parses the leading dotted numbers: `2.3.0+cu121` → 2.3.0, `12.4` → 12.4.
    pub fn parse(text: &str) -> Option<Version> {
        let head = text.trim().split(['+', '-', ' ', 'a', 'b', 'r']).next()?;
        let parts: Option<Vec<u32>> = head.split('.').map(|p| p.parse().ok()).collect();
        parts.filter(|p| !p.is_empty()).map(|parts| Version {
            parts,
            text: head.to_owned(),
        })
    }

    pub fn major(&self) -> u32 {
        self.parts.first().copied().unwrap_or(0)
    }

    pub fn minor(&self) -> u32 {
        self.parts.get(1).copied().unwrap_or(0)
    }

    /// Major and minor only (`12.4.1` → `12.4`).
    #[must_use]
    pub fn major_minor(&self) -> Version {
        Version {
            parts: vec![self.major(), self.minor()],
            text: format!("{}.{}", self.major(), self.minor()),
        }
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        (0..n)
            .map(|i| {
                let a = self.parts.get(i).copied().unwrap_or(0);
                let b = other.parts.get(i).copied().unwrap_or(0);
                a.cmp(&b)
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A torch wheel variant: `torch 2.3` × `cu121`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchVariant {
    pub torch: Version,
    pub variant: String,
    pub cuda: Version,
    /// Compute capabilities compiled in, e.g. `[(7,5), (8,0), ...]`.
    pub archs: Vec<(u32, u32)>,
    /// Whether PTX for the last capability is included (`12.0+PTX`).
    pub ptx: bool,
    pub cudnn: String,
    pub source: String,
}

/// A TensorFlow tested configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorflowConfig {
    pub tensorflow: Version,
    pub cuda: Version,
    pub cudnn: Version,
    pub source: String,
}

/// Every table, parsed.
#[derive(Debug, Clone)]
pub struct Knowledge {
    /// CUDA major.minor → the driver its toolkit bundles (no minor-version compatibility).
    pub cuda_driver: Vec<(Version, Version, String)>,
    /// CUDA major → the driver floor under minor-version compatibility.
    pub minor_compat: Vec<(u32, Version, String)>,
    /// Driver branch → highest CUDA, ascending by branch.
    pub driver_cuda: Vec<(u32, Version, String)>,
    pub torch: Vec<TorchVariant>,
    pub tensorflow: Vec<TensorflowConfig>,
    /// DCGM: total retired pages at which a GPU fails (63).
    pub max_retired_pages: u64,
    /// DCGM: double-bit retired pages above which it warns (15).
    pub dbe_soft_limit: u64,
}

/// Rows of a CSV table: `#` comments and the header skipped, fields split on commas
/// (no field has a comma in it), each row with exactly `width` fields.
fn rows(text: &'static str, width: usize) -> impl Iterator<Item = Vec<&'static str>> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split(',').map(str::trim).collect::<Vec<_>>())
        .filter(move |f| f.len() == width)
}

fn cc(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

impl Knowledge {
    /// The tables, parsed on first use. A malformed row is skipped (tests check every row
    /// parses, so that never happens in a release).
    pub fn get() -> &'static Knowledge {
        static CELL: OnceLock<Knowledge> = OnceLock::new();
        CELL.get_or_init(Knowledge::parse)
    }

    fn parse() -> Knowledge {
        let v = Version::parse;
        let mut driver_cuda: Vec<(u32, Version, String)> = rows(DRIVER_CUDA, 3)
            .filter_map(|f| Some((f[0].parse().ok()?, v(f[1])?, f[2].to_owned())))
            .collect();
        driver_cuda.sort_by_key(|(b, _, _)| *b);
        let limit = |name: &str| {
            rows(RETIRED_PAGES, 3)
                .find(|f| f[0] == name)
                .and_then(|f| f[1].parse().ok())
        };
        Knowledge {
            cuda_driver: rows(CUDA_DRIVER, 3)
                .filter_map(|f| Some((v(f[0])?, v(f[1])?, f[2].to_owned())))
                .collect(),
            minor_compat: rows(CUDA_MINOR_COMPAT, 3)
                .filter_map(|f| Some((f[0].parse().ok()?, v(f[1])?, f[2].to_owned())))
                .collect(),
            driver_cuda,
            torch: rows(TORCH_CUDA, 6)
                .filter_map(|f| {
                    let ptx = f[3].ends_with("+PTX");
                    let archs: Option<Vec<(u32, u32)>> =
                        f[3].trim_end_matches("+PTX").split(';').map(cc).collect();
                    Some(TorchVariant {
                        torch: v(f[0])?,
                        variant: f[1].to_owned(),
                        cuda: v(f[2])?,
                        archs: archs?,
                        ptx,
                        cudnn: f[4].to_owned(),
                        source: f[5].to_owned(),
                    })
                })
                .collect(),
            tensorflow: rows(TENSORFLOW_CUDA, 4)
                .filter_map(|f| {
                    Some(TensorflowConfig {
                        tensorflow: v(f[0])?,
                        cuda: v(f[1])?,
                        cudnn: v(f[2])?,
                        source: f[3].to_owned(),
                    })
                })
                .collect(),
            max_retired_pages: limit("max_retired_pages").unwrap_or(63),
            dbe_soft_limit: limit("dbe_soft_limit").unwrap_or(15),
        }
    }

    /// The driver a CUDA version's own toolkit bundles (`12.4` → 550.54.14).
    pub fn full_support_driver(&self, cuda: &Version) -> Option<&Version> {
        let want = cuda.major_minor();
        self.cuda_driver
            .iter()
            .find(|(c, _, _)| *c == want)
            .map(|(_, d, _)| d)
    }

    /// The driver floor for a CUDA major under minor-version compatibility (12 → 525.60.13).
    pub fn minor_compat_floor(&self, major: u32) -> Option<&Version> {
        self.minor_compat
            .iter()
            .find(|(m, _, _)| *m == major)
            .map(|(_, d, _)| d)
    }

    /// The highest CUDA a driver runs, from its branch (`470.182.03` → 11.4).
    pub fn driver_max_cuda(&self, driver: &Version) -> Option<&Version> {
        self.driver_cuda
            .iter()
            .rev()
            .find(|(b, _, _)| *b <= driver.major())
            .map(|(_, c, _)| c)
    }

    /// The wheel variants of one torch release (`2.3.0` → cu118, cu121).
    pub fn torch_variants(&self, torch: &Version) -> Vec<&TorchVariant> {
        let want = torch.major_minor();
        self.torch.iter().filter(|t| t.torch == want).collect()
    }

    /// TensorFlow's tested configuration for a release.
    pub fn tensorflow_config(&self, tf: &Version) -> Option<&TensorflowConfig> {
        let want = tf.major_minor();
        self.tensorflow.iter().find(|t| t.tensorflow == want)
    }
}

/// Whether a driver runs code built for a CUDA version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverVerdict {
    /// The driver's CUDA is at least the one needed.
    Supported,
    /// Same major, driver at or above the family floor: runs under minor-version
    /// compatibility (PTX JIT and the newest APIs may fail).
    MinorCompat { floor: Version },
    /// Too old: needs at least `minimum` (the family floor) or `full` (the toolkit's driver).
    TooOld {
        minimum: Option<Version>,
        full: Option<Version>,
    },
}

/// The rule of the CUDA compatibility guide: backward compatibility across everything,
/// minor-version compatibility within a major from CUDA 11 on.
pub fn driver_runs(
    k: &Knowledge,
    driver: Option<&Version>,
    driver_cuda: &Version,
    need: &Version,
) -> DriverVerdict {
    let need = need.major_minor();
    if driver_cuda.major_minor() >= need {
        return DriverVerdict::Supported;
    }
    let floor = k.minor_compat_floor(need.major()).cloned();
    if let (Some(floor), Some(driver)) = (&floor, driver)
        && driver_cuda.major() == need.major()
        && driver >= floor
    {
        return DriverVerdict::MinorCompat {
            floor: floor.clone(),
        };
    }
    DriverVerdict::TooOld {
        minimum: floor,
        full: k.full_support_driver(&need).cloned(),
    }
}

/// Whether code compiled for `arch` (`sm_90`, `sm_90a`, `compute_90`) runs on a GPU of
/// compute capability `cc`: SASS within the same major and a minor at least the compiled
/// one; arch-specific SASS (`sm_90a`) on exactly that capability; PTX on anything at least
/// as new (it is compiled on the fly).
pub fn arch_runs_on(arch: &str, cc: (u32, u32)) -> bool {
    let (ptx, digits) = if let Some(d) = arch.strip_prefix("compute_") {
        (true, d)
    } else if let Some(d) = arch.strip_prefix("sm_") {
        (false, d)
    } else {
        return false;
    };
    let specific = digits.ends_with(['a', 'f']);
    let num = digits.trim_end_matches(['a', 'f']);
    let Ok(n) = num.parse::<u32>() else {
        return false;
    };
    let code = (n / 10, n % 10);
    if ptx {
        return cc >= code;
    }
    if specific {
        return cc == code;
    }
    cc.0 == code.0 && cc.1 >= code.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn every_row_of_every_table_parses() {
        for (text, width) in [
            (CUDA_DRIVER, 3),
            (CUDA_MINOR_COMPAT, 3),
            (DRIVER_CUDA, 3),
            (TORCH_CUDA, 6),
            (TENSORFLOW_CUDA, 4),
            (RETIRED_PAGES, 3),
        ] {
            let data_rows = text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .count()
                - 1;
            assert_eq!(rows(text, width).count(), data_rows, "{text}");
            for r in rows(text, width) {
                assert!(
                    r[width - 1].starts_with("https://"),
                    "row without a source: {r:?}"
                );
            }
        }
        let k = Knowledge::get();
        assert_eq!(k.cuda_driver.len(), rows(CUDA_DRIVER, 3).count());
        assert_eq!(k.torch.len(), rows(TORCH_CUDA, 6).count());
        assert_eq!(k.tensorflow.len(), rows(TENSORFLOW_CUDA, 4).count());
    }

    #[test]
    fn key_rows_match_the_release_notes() {
        let k = Knowledge::get();
        assert_eq!(k.full_support_driver(&v("12.4")), Some(&v("550.54.14")));
        assert_eq!(k.full_support_driver(&v("12.4.1")), Some(&v("550.54.14")));
        assert_eq!(k.minor_compat_floor(12), Some(&v("525.60.13")));
        assert_eq!(k.minor_compat_floor(11), Some(&v("450.80.02")));
        assert_eq!(k.full_support_driver(&v("13.0")), Some(&v("580.65.06")));
        assert_eq!(k.driver_max_cuda(&v("470.182.03")), Some(&v("11.4")));
        assert_eq!(k.driver_max_cuda(&v("580.159.04")), Some(&v("13.0")));
        assert_eq!(k.driver_max_cuda(&v("565.57.01")), Some(&v("12.6")));
        assert_eq!(k.max_retired_pages, 63);
        assert_eq!(k.dbe_soft_limit, 15);
        let t23: Vec<&str> = k
            .torch_variants(&v("2.3.0+cu121"))
            .iter()
            .map(|t| t.variant.as_str())
            .collect();
        assert_eq!(t23, ["cu118", "cu121"]);
        let cu130 = k
            .torch_variants(&v("2.11.0"))
            .into_iter()
            .find(|t| t.variant == "cu130")
            .unwrap();
        assert!(cu130.archs.contains(&(9, 0)) && !cu130.archs.contains(&(7, 0)));
        assert_eq!(k.tensorflow_config(&v("2.15.1")).unwrap().cuda, v("12.2"));
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(v("525.60.13") > v("525.6.99"));
        assert!(v("12.10") > v("12.9"));
        assert_eq!(v("2.3.0+cu121"), v("2.3.0"));
        assert_eq!(v("12.4").cmp(&v("12.4.0")), Ordering::Equal);
        assert_eq!(Version::parse("abc"), None);
        assert_eq!(
            v("470.182.03").to_string(),
            "470.182.03",
            "printed as written"
        );
    }

    #[test]
    fn driver_compatibility_follows_the_guide() {
        let k = Knowledge::get();
        // driver 470 runs CUDA <= 11.4: torch +cu121 is too old, needs 525.60.13.
        assert_eq!(
            driver_runs(k, Some(&v("470.182.03")), &v("11.4"), &v("12.1")),
            DriverVerdict::TooOld {
                minimum: Some(v("525.60.13")),
                full: Some(v("530.30.02"))
            }
        );
        assert_eq!(
            driver_runs(k, Some(&v("535.104.05")), &v("12.2"), &v("12.4")),
            DriverVerdict::MinorCompat {
                floor: v("525.60.13")
            }
        );
        assert_eq!(
            driver_runs(k, Some(&v("580.159.04")), &v("13.0"), &v("12.8")),
            DriverVerdict::Supported
        );
    }

    #[test]
    fn architectures_follow_cuda_rules() {
        assert!(arch_runs_on("sm_90", (9, 0)));
        assert!(arch_runs_on("sm_80", (8, 6)));
        assert!(!arch_runs_on("sm_86", (8, 0)));
        assert!(
            !arch_runs_on("sm_90", (12, 0)),
            "SASS does not cross majors"
        );
        assert!(arch_runs_on("compute_90", (12, 0)), "PTX does");
        assert!(arch_runs_on("sm_90a", (9, 0)));
        assert!(!arch_runs_on("sm_100a", (10, 3)));
        assert!(!arch_runs_on("garbage", (9, 0)));
    }
}
