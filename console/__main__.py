"""`python -m console` is `mlsql-console`."""
from console.cli import main

if __name__ == "__main__":
    main()
