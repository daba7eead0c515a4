from hcpscan.cli.main import main

raise SystemExit(main())
