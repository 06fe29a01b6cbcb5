from genlayer.entry import main

main()
