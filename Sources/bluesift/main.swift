import ArgumentParser
import BluesiftDissect
print("bluesift")
