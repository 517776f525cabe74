/usr/local/cuda/bin/compute-sanitizer --tool initcheck --print-limit 0 /tmp/gd-sanitize-build.413/uninit_read 
