"""``python -m dptm`` runs the ``dptm`` command."""
import sys

from .cli import main

sys.exit(main())
