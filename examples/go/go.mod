module example.org/smpref-vectors

go 1.19
