print("reactor-node")
