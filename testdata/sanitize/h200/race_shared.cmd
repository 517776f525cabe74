/usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 0 /tmp/gd-sanitize-build.413/race_shared 
