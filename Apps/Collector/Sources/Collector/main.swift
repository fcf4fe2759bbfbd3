print("collector")
