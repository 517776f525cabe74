# make_fake_root DIR: a machine tree with a loaded R580 driver, one NVIDIA GPU on the PCI bus
# and the user-space libraries, for `gpu-doctor check --root DIR --ldconfig-file DIR.ld`
# (the same shape as crates/gpu-doctor/tests/check_support.rs builds). With the stand-in
# NVML library this is a healthy GPU node as far as `check` can tell, on a machine with none.
make_fake_root() {
  local root="$1" v=580.159.04
  mkdir -p "$root/etc" "$root/proc/sys/kernel" "$root/proc/driver/nvidia" "$root/dev" \
    "$root/sys/bus/pci/devices/0000:00:06.0" "$root/usr/lib/x86_64-linux-gnu"
  printf 'PRETTY_NAME="Ubuntu 24.04.3 LTS"\nID=ubuntu\n' >"$root/etc/os-release"
  echo testhost >"$root/proc/sys/kernel/hostname"
  echo 6.8.0-test >"$root/proc/sys/kernel/osrelease"
  printf 'processor\t: 0\nmodel name\t: Test CPU\n' >"$root/proc/cpuinfo"
  cp "$INTEGRATION_ROOT/testdata/env/proc-version-580.txt" "$root/proc/driver/nvidia/version"
  for n in nvidiactl nvidia0 nvidia-uvm; do : >"$root/dev/$n"; chmod 666 "$root/dev/$n"; done
  echo 0x10de >"$root/sys/bus/pci/devices/0000:00:06.0/vendor"
  echo 0x030200 >"$root/sys/bus/pci/devices/0000:00:06.0/class"
  {
    echo "42 libs found in cache \`/etc/ld.so.cache'"
    for name in libnvidia-ml libcuda; do
      echo ELF >"$root/usr/lib/x86_64-linux-gnu/$name.so.$v"
      ln -sf "$name.so.$v" "$root/usr/lib/x86_64-linux-gnu/$name.so.1"
      printf '\t%s.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/%s.so.1\n' "$name" "$name"
    done
  } >"$root.ld"
}
