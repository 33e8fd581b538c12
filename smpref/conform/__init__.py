"""``smpref conform``: check any SMP server case by case, the way h2spec checks HTTP/2 servers."""
