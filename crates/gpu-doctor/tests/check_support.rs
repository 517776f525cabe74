//! Shared by `check.rs` and `env_diff.rs`: a fake machine in a temporary folder (for
//! `check --root`), a venv holding a stand-in torch, and a runner with a fixed environment.
//! Not a test target of its own: included with `#[path]`.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// What the fake machine has.
pub struct Machine {
    /// `/proc/driver/nvidia/version` fixture, or none (no driver loaded).
    pub proc_version: Option<&'static str>,
    /// Version in the user-space libraries' file names (`libnvidia-ml.so.<v>`).
    pub lib_version: Option<&'static str>,
    /// An NVIDIA 3D controller on the PCI bus.
    pub pci_gpu: bool,
    pub uvm_node: bool,
    /// A toolkit with a stub `libcuda.so.1` in `lib64/stubs`.
    pub stub_toolkit: bool,
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            proc_version: None,
            lib_version: None,
            pci_gpu: false,
            uvm_node: true,
            stub_toolkit: false,
        }
    }
}

/// Builds the machine under `root` and returns the `ldconfig -p` text for it.
pub fn build(root: &Path, m: &Machine) -> String {
    write(
        &root.join("etc/os-release"),
        "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nID=ubuntu\n",
    );
    write(&root.join("proc/sys/kernel/hostname"), "testhost\n");
    write(&root.join("proc/sys/kernel/osrelease"), "6.8.0-test\n");
    write(
        &root.join("proc/cpuinfo"),
        "processor\t: 0\nmodel name\t: Test CPU\n",
    );
    if let Some(v) = m.proc_version {
        let text = std::fs::read_to_string(testdata(&format!("env/{v}"))).unwrap();
        write(&root.join("proc/driver/nvidia/version"), &text);
        let mut nodes = vec!["nvidiactl", "nvidia0"];
        if m.uvm_node {
            nodes.push("nvidia-uvm");
        }
        for n in nodes {
            let p = root.join("dev").join(n);
            write(&p, "");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    }
    if m.pci_gpu {
        let dev = root.join("sys/bus/pci/devices/0000:00:06.0");
        write(&dev.join("vendor"), "0x10de\n");
        write(&dev.join("class"), "0x030200\n");
    }
    let mut ld = String::from("42 libs found in cache `/etc/ld.so.cache'\n");
    if let Some(v) = m.lib_version {
        let lib = root.join("usr/lib/x86_64-linux-gnu");
        for name in ["libnvidia-ml", "libcuda"] {
            write(&lib.join(format!("{name}.so.{v}")), "ELF");
            symlink(format!("{name}.so.{v}"), lib.join(format!("{name}.so.1"))).unwrap();
            let _ = writeln!(
                ld,
                "\t{name}.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/{name}.so.1"
            );
        }
    }
    if m.stub_toolkit {
        let tk = root.join("usr/local/cuda-12.1");
        write(
            &tk.join("version.json"),
            r#"{"cuda": {"name": "CUDA SDK", "version": "12.1.1"}, "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.1.105"}}"#,
        );
        let lib = tk.join("targets/x86_64-linux/lib");
        write(&lib.join("libcudart.so.12.1.105"), "ELF");
        symlink("libcudart.so.12.1.105", lib.join("libcudart.so.12")).unwrap();
        write(&lib.join("stubs/libcuda.so"), "ELF stub");
        symlink("libcuda.so", lib.join("stubs/libcuda.so.1")).unwrap();
        symlink("cuda-12.1", root.join("usr/local/cuda")).unwrap();
    }
    ld
}

/// A fake machine in a temporary folder: its tree (passed as `--root`) and the `ldconfig -p`
/// text its libraries give (passed as `--ldconfig-file`).
pub struct FakeMachine {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    ld_file: PathBuf,
}

impl FakeMachine {
    pub fn new(m: &Machine) -> FakeMachine {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let ld_file = dir.path().join("ld.txt");
        std::fs::write(&ld_file, build(&root, m)).unwrap();
        FakeMachine { dir, root, ld_file }
    }

    /// `gpu-doctor check ARGS` on this machine, with only `env` from the environment.
    pub fn check(&self, args: &[&str], env: &[(&str, String)]) -> Output {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        all.extend([
            "--root",
            self.root.to_str().unwrap(),
            "--ldconfig-file",
            self.ld_file.to_str().unwrap(),
        ]);
        gpu_doctor(&all, env)
    }

    /// A `PATH` whose `python3` is a venv holding the stand-in framework `pkg` (see [`venv`]).
    pub fn path_with_python(&self, pkg: &str) -> String {
        let venv = venv(self.dir.path(), Some(pkg));
        format!("{}/bin:/usr/bin:/bin", venv.display())
    }
}

/// A venv (without pip) whose site-packages holds the stand-in torch from `testdata/env/python/<pkg>`.
pub fn venv(dir: &Path, pkg: Option<&str>) -> PathBuf {
    let venv = dir.join("venv");
    let st = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python3 -m venv (the tests need python3 with the venv module)");
    assert!(st.success());
    if let Some(pkg) = pkg {
        let lib = venv.join("lib");
        let py = std::fs::read_dir(&lib)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let site = py.join("site-packages");
        let src = testdata(&format!("env/python/{pkg}/torch/__init__.py"));
        write(
            &site.join("torch/__init__.py"),
            &std::fs::read_to_string(src).unwrap(),
        );
        let version = pkg.trim_start_matches("torch-").replacen('-', "+", 1);
        std::fs::create_dir_all(site.join(format!("torch-{version}.dist-info"))).unwrap();
        if pkg.ends_with("cu121") {
            // A cuDNN wheel the way pip lays it out.
            write(&site.join("nvidia/cudnn/lib/libcudnn.so.8"), "ELF");
            std::fs::create_dir_all(site.join("nvidia_cudnn_cu12-8.9.2.26.dist-info")).unwrap();
        }
    }
    venv
}

/// The stand-in NVML library built by the `fake-nvml` crate.
pub fn fake_nvml() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [
        deps.join("libfake_nvml.so"),
        deps.join("../libfake_nvml.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("libfake_nvml.so not built: run `cargo build -p fake-nvml` first")
}

/// Runs the binary with nothing from the caller's environment but what is given.
pub fn gpu_doctor(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.env_clear()
        .env("PATH", "/nonexistent")
        .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .env("GPU_DOCTOR_KERNEL_LOG", "/nonexistent/kernel.log")
        .args(["--color", "never"])
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Replaces the temporary folder, which differs from run to run.
pub fn scrub(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "[TMP]")
}

/// insta filters for what differs from machine to machine: timings, Python's version, where
/// the repository is checked out.
pub const FILTERS: [(&str, &str); 6] = [
    (r"file \S*?/testdata/", "file [REPO]/testdata/"),
    (r"\(in \d+ ms; Python probes \d+ ms\)", "(in [MS])"),
    (r"imports \(\d+ ms\)", "imports ([MS])"),
    (r"Python \d+\.\d+\.\d+", "Python [VERSION]"),
    (r"lib/python3\.\d+/", "lib/python3.X/"),
    (
        r#""(probe_ms|total|python|gpus|driver|cuda|host|kernel_log|ldconfig|variables)": \d+"#,
        r#""$1": "[MS]""#,
    ),
];
