// Device SDK.
