"""``python -m ragmeter`` runs the same command line as the ``ragmeter`` script."""

from ragmeter.cli import main

if __name__ == "__main__":
    main()
