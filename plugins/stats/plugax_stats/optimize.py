NAMES: dict = {}
