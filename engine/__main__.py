import sys

from engine.native_threads import limit_native_threads

limit_native_threads()  # before numpy loads: one rule for the Studio's parallelism (engine.native_threads)

from engine.cli import main  # noqa: E402 - after the native pools' limits

sys.exit(main())
