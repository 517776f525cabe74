/usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 0 /tmp/gd-sanitize-build.413/many_reports 
