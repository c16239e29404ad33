from curiosity_tui.cli import main

raise SystemExit(main())
