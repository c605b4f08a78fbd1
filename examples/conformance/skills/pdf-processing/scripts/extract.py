import sys

def main(path: str) -> None:
    print(f"would extract the text of {path}")

if __name__ == "__main__":
    main(sys.argv[1])
