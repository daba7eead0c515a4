from scanner.cli.main import main

raise SystemExit(main())
