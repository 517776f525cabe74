//! Documentation of the `check` rules (`GD1xx` memory/ECC, `GD25x` bus, `GD3xx` thermal/power,
//! `GD4xx` environment), in the sections every rule has, for `gpu-doctor rule CODE`. The
//! health rules' docs live here too, so one slice registers them all.

crate::rule_docs! {
    GD100 = ("GD100", "ecc-uncorrectable-volatile", HwXid, "Counts uncorrectable ECC errors since the driver loaded (NVML volatile counter).", "An uncorrectable error kills the job that touched the memory and means the memory is failing.", "gpu0.ecc: 2 uncorrectable ECC errors since the driver loaded", "Drain the node, reset the GPU (`nvidia-smi -r`), run `dcgmi diag -r 3`; RMA if errors recur."),
    GD101 = ("GD101", "ecc-uncorrectable-aggregate", HwXid, "Counts uncorrectable ECC errors over the GPU's life (aggregate counter).", "Past uncorrectable errors predict new ones; more than a few is an RMA reason.", "gpu0.ecc: 5 uncorrectable ECC errors over the GPU's life", "Watch the count; run `dcgmi diag -r 3`; RMA if it keeps rising."),
    GD102 = ("GD102", "retired-pages-limit", HwXid, "Compares retired pages (pre-Ampere) with DCGM's limit of 63.", "At the limit the GPU cannot retire more bad memory and DCGM fails it.", "gpu0.retired_pages: 64 pages retired (DCGM limit 63)", "Take the GPU out of service and RMA it."),
    GD103 = ("GD103", "retired-pages-pending", HwXid, "Looks for a page retirement waiting for a driver reload.", "Until the reload the bad page can still be handed out.", "gpu0.retired_pages: a retirement is pending", "Reload the driver or reboot: `sudo nvidia-smi -r -i 0`."),
    GD104 = ("GD104", "retired-pages-dbe-soft-limit", HwXid, "Compares double-bit retired pages with DCGM's soft limit of 15.", "Above it, DCGM fails the GPU once retirements keep accumulating (more than one a week).", "gpu0.retired_pages: 16 double-bit retirements", "Run `dcgmi diag -r 3` and plan an RMA."),
    GD105 = ("GD105", "row-remap-failure", HwXid, "Reads the row remapper's failure flag (Ampere and later).", "NVIDIA's RMA criterion: the memory bank has no spare rows left.", "gpu0.remapped_rows: a row remap failed", "Take the GPU out of service; run the field diagnostic and RMA."),
    GD106 = ("GD106", "row-remap-pending", HwXid, "Looks for a row remap waiting for a GPU reset.", "The remap takes effect only after a reset; until then error containment handles it.", "gpu0.remapped_rows: a remap is pending", "Reset the GPU when it is idle: `sudo nvidia-smi -r -i 0`, or reboot."),
    GD250 = ("GD250", "pcie-width-degraded", HwXid, "Compares the PCIe link width with the maximum.", "A narrower link cuts host-device bandwidth: a loose card, riser or slot.", "gpu0.pcie: x8 of x16", "Reseat the card or riser; check the slot; look for `limited by` in dmesg."),
    GD251 = ("GD251", "pcie-gen-degraded", HwXid, "Compares the PCIe generation with the maximum while the GPU is busy.", "A lower generation under load halves bandwidth per step.", "gpu0.pcie: gen 3 of 5 while busy", "Check BIOS PCIe settings and risers; measure again under load."),
    GD252 = ("GD252", "gpu-lost", HwXid, "Notices a GPU that stopped answering NVML.", "A lost GPU takes down every job on it until the node is rebooted.", "gpu1.state: GPU is lost", "Reboot the node; check power, cooling and the PCIe slot; Xid 79 in dmesg confirms."),
    GD253 = ("GD253", "kernel-xid", HwXid, "Reads Xid errors from the kernel log and says what NVIDIA's catalog makes of them.", "Xids are the driver's own report of GPU faults; most need a reset, some an RMA.", "kernel.xid: Xid 79 (GPU has fallen off the bus) on PCI 0000:05:00", "Follow the catalog's action: restart the app (13, 31, 43, 45, 68), reset the GPU or reboot (48, 79, 94, 95, 119...)."),
    GD300 = ("GD300", "hw-thermal-slowdown", HwThermalPower, "Looks for the HW thermal slowdown clock-event reason.", "The GPU is too hot and halves its clocks: jobs run slowly.", "gpu0.throttle: HW thermal slowdown", "Check airflow, fans and the room; `nvidia-smi -q -d TEMPERATURE,PERFORMANCE`."),
    GD301 = ("GD301", "hw-power-brake", HwThermalPower, "Looks for the HW power brake slowdown reason.", "The board's power brake (external signal, PSU) cuts clocks hard.", "gpu0.throttle: power brake", "Check power supplies and cabling."),
    GD302 = ("GD302", "hw-slowdown", HwThermalPower, "Looks for the HW slowdown reason.", "Clocks cut by half or more: heat, power brake or power draw too high.", "gpu0.throttle: HW slowdown", "Check cooling and power; sample over time, it may be a transient."),
    GD303 = ("GD303", "sw-thermal-slowdown", HwThermalPower, "Looks for the SW thermal slowdown reason.", "The driver lowers clocks to stay under the temperature target.", "gpu0.throttle: thermal (SW)", "Improve cooling."),
    GD304 = ("GD304", "temperature-at-slowdown", HwThermalPower, "Compares the temperature with the GPU's slowdown threshold.", "At the threshold the GPU throttles.", "gpu0.temperature: 88 °C (slowdown at 87 °C)", "Improve cooling; check fans and airflow."),
    GD305 = ("GD305", "temperature-near-slowdown", HwThermalPower, "Warns within 5 °C of the slowdown threshold.", "A little more load and the GPU throttles.", "gpu0.temperature: 84 °C (slowdown at 87 °C)", "Improve cooling."),
    GD400 = ("GD400", "no-driver-loaded", EnvNoDriver, "Finds NVIDIA GPUs on the PCI bus with no nvidia kernel module loaded.", "Nothing can use the GPU.", "driver.kernel_module: 1 NVIDIA GPU(s) on the PCI bus but the nvidia kernel module is not loaded", "`sudo modprobe nvidia`; rebuild with DKMS after a kernel update; sign the module for Secure Boot."),
    GD401 = ("GD401", "driver-library-version-mismatch", EnvNvmlMismatch, "Compares the kernel module's version with libnvidia-ml, libcuda and NVML.", "\"Failed to initialize NVML: Driver/library version mismatch\": every GPU program fails.", "driver.version_mismatch: kernel module 535.104.05 but libnvidia-ml.so.1 535.129.03", "Reboot (or reload the modules); hold the driver packages."),
    GD402 = ("GD402", "driver-stub", EnvLibMissing, "Finds a toolkit's link-time stub libcuda/libnvidia-ml where the loader looks first.", "The stub loads and then fails (CUDA error 34, \"CUDA driver is a stub library\").", "driver.stub: libcuda.so.1 → /usr/local/cuda/lib64/stubs/libcuda.so.1", "Remove the stubs folder from LD_LIBRARY_PATH."),
    GD403 = ("GD403", "driver-older-than-framework", EnvDriverTooOld, "Compares the CUDA a framework was built with against the CUDA the driver runs, with minor-version compatibility.", "\"CUDA driver version is insufficient for CUDA runtime version\"; torch.cuda.is_available() is False.", "torch.driver: driver 470.182.03 runs CUDA ≤ 11.4; torch 2.3.0+cu121 needs ≥ 525.60.13", "Install the framework build for the driver's CUDA (`--index-url .../cu118`) or upgrade the driver."),
    GD404 = ("GD404", "framework-cpu-build", EnvTorchCpuBuild, "Finds a CPU-only build of torch, tensorflow, jax or cupy on a machine with a GPU.", "It never uses the GPU: \"Torch not compiled with CUDA enabled\".", "torch.cuda_build: torch 2.3.0+cpu is a CPU-only build", "`pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cu121`."),
    GD405 = ("GD405", "framework-arch-unsupported", EnvArchUnsupported, "Compares the framework's compiled architectures with each GPU's compute capability.", "\"no kernel image is available for execution on the device\".", "torch.arch: torch 2.3.0+cu121 has no code for GPU 0 (compute capability 12.0)", "Install a build whose arch list covers the GPU (e.g. cu128 for Blackwell)."),
    GD406 = ("GD406", "cuda-visible-devices", EnvVisibleDevices, "Checks CUDA_VISIBLE_DEVICES names GPUs that exist (indices or UUIDs).", "An empty or invalid value hides GPUs: \"no CUDA-capable device is detected\".", "env.cuda_visible_devices: it is set but empty", "`unset CUDA_VISIBLE_DEVICES` or list valid GPUs."),
    GD407 = ("GD407", "cuda-device-order", EnvVisibleDevices, "Checks CUDA_DEVICE_ORDER, and that it is set when GPU models differ.", "CUDA's default numbering (fastest first) differs from nvidia-smi's.", "env.cuda_device_order: not set and the GPUs differ", "`export CUDA_DEVICE_ORDER=PCI_BUS_ID`."),
    GD408 = ("GD408", "ld-library-path-shadowing", EnvNvmlMismatch, "Finds LD_LIBRARY_PATH folders with driver or CUDA libraries of another version than the ones meant to load.", "The wrong library loads: version mismatches, missing symbols, forward-compat errors 803/804.", "env.ld_library_path: libcuda.so.1 535.54.03 in /opt/old/lib", "Remove those folders from LD_LIBRARY_PATH."),
    GD409 = ("GD409", "alloc-conf-syntax", Other, "Parses PYTORCH_CUDA_ALLOC_CONF like torch's allocator does.", "A typo makes torch raise at the first CUDA allocation.", "env.pytorch_cuda_alloc_conf: unknown option `expandable_segment`", "Use `key:value` pairs, e.g. `expandable_segments:True`."),
    GD410 = ("GD410", "device-nodes", EnvNoDriver, "Checks /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN exist and this user may open them.", "Without them CUDA cannot start.", "driver.device_nodes: missing device nodes: /dev/nvidia-uvm", "`sudo nvidia-modprobe -u -c=0`; add the user to the nodes' group."),
    GD411 = ("GD411", "persistence-off", Other, "Reads persistence mode.", "Without it the driver unloads between jobs: slow starts and volatile ECC counts reset.", "gpu0.persistence: off", "`sudo systemctl enable --now nvidia-persistenced`."),
    GD412 = ("GD412", "framework-cuda-fails", Other, "Runs a tiny computation on the GPU in each framework's own interpreter.", "If it fails, every job fails.", "torch.cuda_works: torch cannot use the GPU: CUDA error: ...", "Fix the checks above it; else run the probe by hand."),
    GD413 = ("GD413", "library-missing", EnvLibMissing, "Finds a missing CUDA or driver library (import errors, no libnvidia-ml.so.1).", "\"libcudart.so.12: cannot open shared object file\".", "cupy.import: `import cupy` fails: libcudart.so.12: cannot open shared object file", "Install the matching `nvidia-cuda-runtime-cuXX` wheel or toolkit."),
    GD414 = ("GD414", "nvcc-newer-than-driver", EnvDriverTooOld, "Compares the nvcc on PATH with the CUDA the driver runs.", "What it builds does not run on this driver.", "cuda.toolkit: nvcc on PATH is CUDA 13.0, driver runs CUDA ≤ 12.4", "Put an older toolkit first on PATH or upgrade the driver."),
    GD417 = ("GD417", "nvml-unavailable", EnvNoDriver, "Opens NVML to read GPU health.", "Without NVML neither nvidia-smi nor gpu-doctor can see the GPUs.", "gpus.nvml: NVML cannot be opened", "Fix the driver checks; run `nvidia-smi`."),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_in_their_ranges_and_fully_documented() {
        let mut codes: Vec<&str> = RULES.iter().map(|d| d.code).collect();
        codes.sort_unstable();
        let n = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), n, "duplicate code");
        for d in RULES {
            let num: u32 = d.code[2..].parse().unwrap();
            assert!(
                (100..200).contains(&num) || (250..500).contains(&num),
                "{}",
                d.code
            );
            for section in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## How to fix",
            ] {
                assert!(d.body.contains(section), "{} lacks {section}", d.code);
            }
        }
    }
}
