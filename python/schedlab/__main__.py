from schedlab.cli import main

raise SystemExit(main())
