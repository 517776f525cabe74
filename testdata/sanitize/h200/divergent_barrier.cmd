/usr/local/cuda/bin/compute-sanitizer --tool synccheck --print-limit 0 /tmp/gd-sanitize-build.413/divergent_barrier 
