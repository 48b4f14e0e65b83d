// ReactorCore module
