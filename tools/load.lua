-- The request mix of tools/load.sh: out of every 50 requests, 35 list voices, 10 synthesise a short sentence,
-- 4 poll a job and 1 creates a job. The key and the job to poll come from the environment.
local key = os.getenv("SAUTI_LOAD_KEY")
local job = os.getenv("SAUTI_LOAD_JOB")
local json = { ["Content-Type"] = "application/json", ["xi-api-key"] = key }
local plain = { ["xi-api-key"] = key }
local n = 0

request = function()
  n = n + 1
  local slot = n % 50
  if slot < 35 then
    return wrk.format("GET", "/v1/voices", plain)
  elseif slot < 45 then
    return wrk.format("POST", "/v1/text-to-speech/zuri", json, '{"text":"Habari za asubuhi."}')
  elseif slot < 49 then
    return wrk.format("GET", "/v1/tts/jobs/" .. job, plain)
  end
  return wrk.format("POST", "/v1/tts/jobs", json, '{"text":"Asante sana."}')
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("requests %d\nerrors %d\np50_ms %.2f\np99_ms %.2f\n", summary.requests,
    e.connect + e.read + e.write + e.status + e.timeout, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
